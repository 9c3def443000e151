package telephony

import (
	"reflect"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/verbalize"
)

// The line speaks the tenant's language: its locale, else the locale's language, else English.
// Every language has every line, each of whole sentences (the line speaks a sentence at a
// time), the tenant's name where the English has it, and no other verb.
func TestLinesSpeakTheTenantsLanguage(t *testing.T) {
	for locale, want := range map[string]string{"es-MX": "es", "es": "es", "ar": "ar", "ar-EG": "ar", "en-GB": "en", "fr-FR": "en", "": "en"} {
		if got := linesFor(&engine.Tenant{Locale: locale}); got != lineLanguages[want] {
			t.Errorf("%q: the line speaks %q", locale, got.welcome)
		}
	}
	named := map[string]bool{"welcome": true, "confirmInApp": true}
	for lang, l := range lineLanguages {
		v := reflect.ValueOf(*l)
		for i := range v.NumField() {
			field, text := v.Type().Field(i).Name, v.Field(i).String()
			switch {
			case text == "":
				t.Errorf("%s: %s is missing", lang, field)
			case strings.Count(text, "%") != map[bool]int{true: 1}[named[field]] || named[field] && !strings.Contains(text, "%s"):
				t.Errorf("%s: %s has the wrong verbs: %q", lang, field, text)
			case field != "ourBank":
				if _, rest := verbalize.CutSentences(text + " "); strings.TrimSpace(rest) != "" {
					t.Errorf("%s: %s does not end a sentence: %q", lang, field, text)
				}
			}
		}
	}

	es := &engine.Tenant{Locale: "es-ES", Disclosure: map[string]string{"es": "Habla con un asistente de IA.", "en": "You are talking to an AI assistant."}}
	if got := greetingText(es); got != "Habla con un asistente de IA. Bienvenido a nuestro banco. Introduzca su PIN en el teclado y después pulse la tecla numeral." {
		t.Errorf("a Spanish tenant's greeting: %q", got)
	}
}
