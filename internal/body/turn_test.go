package body

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTurnCheck(t *testing.T) {
	for _, tc := range []struct {
		body  string
		audio bool
		field string // "" when the body passes
	}{
		{`{"transcript":" hi "}`, false, ""},
		{`{"mode":"home"}`, false, ""},
		{`{}`, true, ""},
		{`{}`, false, "transcript"},
		{`{"audio_base64":"UklGRg=="}`, false, ""},
		{`{"mode":"shout","transcript":"hi"}`, false, "mode"},
		{`{"transcript":"` + strings.Repeat("a", MaxMessageLen+1) + `"}`, false, "transcript"},
		{`{"transcript":"hi","messages":[{"role":"tool","content":"x"}]}`, false, "messages[0].role"},
		{`{"transcript":"hi","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"` + strings.Repeat("é", MaxMessageLen+1) + `"}]}`, false, "messages[1].content"},
		{`{"transcript":"hi","context":{"sessionId":"a b"}}`, false, "context.sessionId"},
		{`{"transcript":"hi","context":{"country_code":"USA"}}`, false, "context.country_code"},
		{`{"transcript":"hi","context":{"screen":"` + strings.Repeat("s", 1025) + `"}}`, false, "context.screen"},
		{`{"transcript":"hi","meta":{"locale":"not a tag"}}`, false, "meta.locale"},
	} {
		var b Turn
		if err := json.Unmarshal([]byte(tc.body), &b); err != nil {
			t.Fatal(err)
		}
		_, err := b.Check(tc.audio)
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%.60s: %v", tc.body, err)
		case tc.field != "" && (err == nil || err.Field != tc.field):
			t.Errorf("%.60s: got %v, want a problem with %s", tc.body, err, tc.field)
		}
	}
}

func TestTurnCheckValues(t *testing.T) {
	var b Turn
	body := `{"transcript":" hola ","mode":"voice","messages":[{"role":"user","content":"a"}],
		"context":{"sessionId":"c-1","country_code":"mx","screen":{"page":"home"}},"meta":{"locale":"es-MX"}}`
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	c, err := b.Check(false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != "voice" || c.Transcript != "hola" || len(c.History) != 1 || c.ConversationID != "c-1" ||
		c.Country != "MX" || c.Screen != `{"page":"home"}` || c.Locale != "es-MX" {
		t.Errorf("checked %+v", c)
	}
}
