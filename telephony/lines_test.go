package telephony

import (
	"encoding/json"
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
			case strings.Count(text, "{name}") != map[bool]int{true: 1}[named[field]] || strings.Contains(text, "%"):
				t.Errorf("%s: %s names the tenant wrongly: %q", lang, field, text)
			case field != "ourBank":
				if _, rest := verbalize.CutSentences(text + " "); strings.TrimSpace(rest) != "" {
					t.Errorf("%s: %s does not end a sentence: %q", lang, field, text)
				}
			}
		}
	}

	es := &engine.Tenant{Locale: "es-ES", Disclosure: map[string]string{"es": "Habla con un asistente de IA.", "en": "You are talking to an AI assistant."}}
	if got := greetingText(Entry{Tenant: es}); got != "Habla con un asistente de IA. Bienvenido a nuestro banco. Introduzca su PIN en el teclado y después pulse la tecla numeral." {
		t.Errorf("a Spanish tenant's greeting: %q", got)
	}
}

// A tenant rewords the prompts it names, with its name for {name}; the others stay its
// language's. A prompt the line does not have, an empty one or one too long is refused.
func TestTenantRewordsPrompts(t *testing.T) {
	c := &Config{Numbers: []string{"+15550100"}, Prompts: map[string]string{
		"welcome": "Gracias por llamar a {name}. Marque su clave y pulse almohadilla.", "busy": "Estamos ocupados. Adiós."}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	l := linesOf(Entry{Tenant: &engine.Tenant{Name: "Banco Demo", Locale: "es-MX"}, Config: c})
	if l.welcome != "Gracias por llamar a Banco Demo. Marque su clave y pulse almohadilla." || l.busy != "Estamos ocupados. Adiós." ||
		l.confirmInApp != "Por su seguridad, confirme esta operación en la aplicación de Banco Demo. No puedo hacerlo por teléfono." {
		t.Errorf("reworded lines: %q / %q / %q", l.welcome, l.busy, l.confirmInApp)
	}
	if lineLanguages["es"].busy == l.busy {
		t.Error("rewording changed the built-in lines")
	}
	for prompts, want := range map[string]string{
		`{"greeting":"Hi."}`: `prompts.greeting: not a prompt of the line's`,
		`{"busy":" "}`:       "prompts.busy: must be a line of 1 to 500 characters",
		`{"busy":"` + strings.Repeat("a", 501) + `"}`: "prompts.busy: must be a line of 1 to 500 characters",
	} {
		var p map[string]string
		json.Unmarshal([]byte(prompts), &p)
		c := &Config{Numbers: []string{"+15550100"}, Prompts: p}
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", prompts, err, want)
		}
	}
}
