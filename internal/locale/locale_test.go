package locale

import (
	"strings"
	"testing"
)

func TestDirection(t *testing.T) {
	rtl := []string{"ar", "ar-SA", "AR-eg", "he", "he-IL", "iw", "fa-IR", "ur-PK", "ps", "sd", "ug", "yi", "dv", "ckb", "syr", "az-Arab", "pa-Arab-PK", "uz-Arab", "ku-Arab", "pa-PK"}
	ltr := []string{"", "en", "en-US", "fr", "zh-Hans", "ja", "ar-Latn", "ku", "ku-Latn", "az", "tr", "ru", "hi", "pa", "pa-IN", "sr-Cyrl"}
	for _, l := range rtl {
		if got := Direction(l); got != "rtl" {
			t.Errorf("Direction(%q) = %s, want rtl", l, got)
		}
	}
	for _, l := range ltr {
		if got := Direction(l); got != "ltr" {
			t.Errorf("Direction(%q) = %s, want ltr", l, got)
		}
	}
}

func TestLocaleFallbacks(t *testing.T) {
	if got := strings.Join(Fallbacks("pt-BR-x"), ","); got != "pt-BR-x,pt-BR,pt" {
		t.Errorf("got %s", got)
	}
}
