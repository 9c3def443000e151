package token

import (
	"reflect"
	"testing"

	"github.com/convengine/engine/widgets"
)

func TestHashConfirms(t *testing.T) {
	const tok = "abc"
	const sum = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" // SHA-256 of "abc"
	if got := Hash(tok); got != sum {
		t.Fatalf("Hash = %s, want %s", got, sum)
	}
	text := widgets.Widget(widgets.Stat{Label: "Balance"})
	ws := []widgets.Widget{text, widgets.Confirm{Title: "Send?", Execute: widgets.Execute{Tool: "transfer", Token: tok}}}
	got := HashConfirms(ws)
	want := []widgets.Widget{text, widgets.Confirm{Title: "Send?", Execute: widgets.Execute{Tool: "transfer", Token: "sha256:" + sum}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("HashConfirms = %#v, want %#v", got, want)
	}
	if ws[1].(widgets.Confirm).Execute.Token != tok {
		t.Error("HashConfirms changed its argument")
	}
}
