package body

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// fieldOf is the field err names, "" for none.
func fieldOf(err *FieldError) string {
	if err == nil {
		return ""
	}
	return err.Field
}

func TestExecuteCheck(t *testing.T) {
	for _, tc := range []struct {
		body  string
		field string // the first rule broken, "" for none
	}{
		{`{"auth":{"method":"faceid","verifiedAt":"2026-01-02T15:04:05Z"}}`, ""},
		{`{"auth":{"method":"passcode","verifiedAt":1767366245000},"context":{"locale":"es-MX"}}`, ""},
		{`{}`, "auth.method"},
		{`{"auth":{"method":"retina","verifiedAt":"2026-01-02T15:04:05Z"}}`, "auth.method"},
		{`{"auth":{"method":"touchid"}}`, "auth.verifiedAt"},
		{`{"auth":{"method":"touchid","verifiedAt":1767366245}}`, "auth.verifiedAt"},
		{`{"auth":{"method":"faceid","verifiedAt":"2026-01-02T15:04:05Z"},"context":{"locale":"not a tag"}}`, "context.locale"},
	} {
		var b Execute[struct{}]
		if err := json.Unmarshal([]byte(tc.body), &b); err != nil {
			t.Fatal(err)
		}
		_, bad := b.CheckAuth()
		if bad == nil {
			_, bad = b.Locale()
		}
		if got := fieldOf(bad); got != tc.field {
			t.Errorf("%s: %v, want a fault of %q", tc.body, bad, tc.field)
		}
	}
	var b Execute[struct{}]
	json.Unmarshal([]byte(`{"auth":{"method":"faceid","verifiedAt":"2026-01-02T15:04:05.120Z"}}`), &b)
	if at, _ := b.CheckAuth(); !at.Equal(time.Date(2026, 1, 2, 15, 4, 5, 120e6, time.UTC)) {
		t.Errorf("verifiedAt = %v", at)
	}
	if l, bad := b.Locale(); l != "" || bad != nil {
		t.Errorf("Locale() = %q, %v without a context", l, bad)
	}
	if MissingExecute().Field != "execute" {
		t.Errorf("MissingExecute names %q", MissingExecute().Field)
	}
}

func TestSessionMetadata(t *testing.T) {
	for _, tc := range []struct {
		metadata, want, field string
	}{
		{``, ``, ""},
		{`null`, ``, ""},
		{`{ "plan" : "gold" }`, `{"plan":"gold"}`, ""},
		{`["gold"]`, ``, "metadata"},
		{`{"x":"` + strings.Repeat("a", MaxSessionMetadata) + `"}`, ``, "metadata"},
	} {
		b := Session{Metadata: json.RawMessage(tc.metadata)}
		got, bad := b.CheckMetadata()
		if string(got) != tc.want || fieldOf(bad) != tc.field {
			t.Errorf("%.40s: %s, %v; want %s and a fault of %q", tc.metadata, got, bad, tc.want, tc.field)
		}
	}
}

func TestSpeechCheck(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		b     Speech
		voice string
		field string
	}{
		{Speech{Text: str("Hello")}, "", ""},
		{Speech{Text: str("Hello"), Voice: str(" alloy ")}, "alloy", ""},
		{Speech{}, "", "text"},
		{Speech{Text: str(strings.Repeat("a", MaxSpeechText+1))}, "", "text"},
		{Speech{Text: str("\xff")}, "", "text"},
		{Speech{Text: str("  ")}, "", "text"},
		{Speech{Text: str("Hello"), Voice: str(" ")}, "", "voice"},
	} {
		voice, bad := tc.b.Check()
		if voice != tc.voice || fieldOf(bad) != tc.field {
			t.Errorf("%+v: %q, %v; want %q and a fault of %q", tc.b, voice, bad, tc.voice, tc.field)
		}
	}
}

func TestInputTurn(t *testing.T) {
	for _, tc := range []struct {
		in    Input
		field string
	}{
		{Input{Transcript: "hi", TurnID: "0b1c9d2e-3f4a-4b5c-8d6e-7f8091a2b3c4"}, ""},
		{Input{Audio: []byte("RIFF")}, ""},
		{Input{Samples: make([]int16, MaxAudioSeconds*SampleRate)}, ""},
		{Input{Transcript: "hi", Audio: []byte("RIFF")}, "audio"},
		{Input{Audio: []byte("RIFF"), Samples: []int16{0}}, "samples"},
		{Input{Samples: make([]int16, MaxAudioSeconds*SampleRate+1)}, "samples"},
		{Input{Transcript: "hi", TurnID: "not-a-uuid"}, "turn_id"},
	} {
		_, bad := tc.in.Turn()
		if fieldOf(bad) != tc.field {
			t.Errorf("%.80v: %v, want a fault of %q", tc.in, bad, tc.field)
		}
	}
	in := Input{Transcript: "hi", Mode: "voice", Screen: "balance", CountryCode: "us", Locale: "es-MX", ConversationID: "c1",
		Messages: []Message{{Role: "user", Content: "hello"}}}
	b, bad := in.Turn()
	if bad != nil {
		t.Fatal(bad)
	}
	c, bad := b.Check(false)
	if bad != nil {
		t.Fatal(bad)
	}
	if c.Mode != "voice" || c.Transcript != "hi" || c.Screen != "balance" || c.Country != "US" || c.Locale != "es-MX" ||
		c.ConversationID != "c1" || len(c.History) != 1 {
		t.Errorf("checked turn = %+v", c)
	}
}
