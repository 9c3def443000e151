package verbalize

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutSentences(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
		rest string
	}{
		{"Hello there. How", []string{"Hello there."}, " How"},
		{"Hello there.", nil, "Hello there."},
		{"It costs $1,234.56. Done? Yes! And", []string{"It costs $1,234.56.", "Done?", "Yes!"}, " And"},
		{"Pi is 3.14 and more", nil, "Pi is 3.14 and more"},
		{`He said "stop." Then`, []string{`He said "stop."`}, " Then"},
		{"Wait… what? ", []string{"Wait…", "what?"}, " "},
		{"你好。我们", []string{"你好。"}, "我们"},
		{"مرحبا؟ نعم", []string{"مرحبا؟"}, " نعم"},
		{strings.Repeat("word ", 50) + ", and " + strings.Repeat("more ", 5), []string{strings.Repeat("word ", 49) + "word ,"}, " and " + strings.Repeat("more ", 5)},
	} {
		got, rest := CutSentences(tc.text)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || rest != tc.rest {
			t.Errorf("CutSentences(%q) = %q, %q; want %q, %q", tc.text, got, rest, tc.want, tc.rest)
		}
	}
}

func FuzzCutSentences(f *testing.F) {
	f.Add("Hello there. How are you? Fine.")
	f.Add("$1.50. Next")
	f.Add(strings.Repeat("a, ", 100))
	f.Fuzz(func(t *testing.T, text string) {
		got, rest := CutSentences(text)
		// Nothing is lost or made up: the sentences and the rest are the text, white space aside.
		joined := strings.Join(append(got, rest), "")
		squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
		if squeeze(joined) != squeeze(text) {
			t.Fatalf("CutSentences(%q) = %q, %q", text, got, rest)
		}
		for _, s := range got {
			if strings.TrimSpace(s) == "" || (utf8.ValidString(text) && !utf8.ValidString(s)) {
				t.Fatalf("sentence %q of %q", s, text)
			}
		}
	})
}

func TestHold(t *testing.T) {
	for _, tc := range []struct {
		text, ready, held string
		final             bool
	}{
		{text: "Your card [CA", ready: "Your card ", held: "[CA"},
		{text: "Your card [CARD_1] is", ready: "Your card [CARD_1] is"},
		{text: "Your card 4111 1111 ", ready: "Your card", held: " 4111 1111 "},
		{text: "Sent on 4111-", ready: "Sent on", held: " 4111-"},
		{text: "It costs 12 dollars.", ready: "It costs 12 dollars."},
		{text: "Your card 4539.1488.", ready: "Your card", held: " 4539.1488."},
		{text: "Card 4539/1488/", ready: "Card", held: " 4539/1488/"},
		{text: "Card 4539\u200b1488\u200b", ready: "Card", held: " 4539\u200b1488\u200b"},
		{text: "Card ４５３９　１４８８", ready: "Card", held: " ４５３９　１４８８"},
		{text: "Card ④⑤③⑨ ①", ready: "Card", held: " ④⑤③⑨ ①"},
		{text: "Card (4539) (1488) (", ready: "Card", held: " (4539) (1488) ("},
		{text: "I read GB82 WE", ready: "I read", held: " GB82 WE"},
		{text: "I read GB82.WEST.12", ready: "I read", held: " GB82.WEST.12"},
		{text: "Call NOW", ready: "Call NOW"},
		{text: "I read G", ready: "I read", held: " G"},
		{text: "I read GB", ready: "I read", held: " GB"},
		{text: "Hello ", ready: "Hello "},
		{text: "a [" + strings.Repeat("x", 40), ready: "a [" + strings.Repeat("x", 40)},
		{text: "[CARD_1 and 41", ready: "", held: "[CARD_1 and 41"},
		{text: "Your card [CA", ready: "Your card [CA", final: true},
	} {
		ready, held := Hold(tc.text, tc.final)
		if ready != tc.ready || held != tc.held {
			t.Errorf("Hold(%q, %v) = %q, %q; want %q, %q", tc.text, tc.final, ready, held, tc.ready, tc.held)
		}
	}
}

func TestNumberRuns(t *testing.T) {
	got := NumberRuns("Send $1,234.50 to Alex on 12.05., ref 7.")
	if want := []string{"1,234.50", "12.05", "7"}; !slices.Equal(got, want) {
		t.Errorf("NumberRuns = %q, want %q", got, want)
	}
}

func TestJoinStepAndApologyAfter(t *testing.T) {
	for _, tc := range []struct{ said, delta, want string }{
		{"", "Hi", "Hi"}, {"Checking.", "", ""}, {"Checking.", "Done", " Done"},
		{"Checking. ", "Done", "Done"}, {"Checking.", "\nDone", "\nDone"}, {"Listo", "¡Sí!", " ¡Sí!"},
	} {
		if got := JoinStep(tc.said, tc.delta); got != tc.want {
			t.Errorf("JoinStep(%q, %q) = %q, want %q", tc.said, tc.delta, got, tc.want)
		}
	}
	for _, tc := range []struct{ said, want string }{
		{"", "Sorry."}, {"  ", "Sorry."}, {"Your balance is", "… Sorry."},
		{"Done.", " Sorry."}, {"Done. ", "Sorry."}, {"Your balance is ", "… Sorry."}, {"完了。", " Sorry."},
	} {
		if got := ApologyAfter(tc.said, "Sorry."); got != tc.want {
			t.Errorf("ApologyAfter(%q) = %q, want %q", tc.said, got, tc.want)
		}
	}
}
