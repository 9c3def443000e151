package body

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSpeechText bounds the text of one tts request, in characters.
const MaxSpeechText = 4000

// Speech is the body of POST /engine/tts.
type Speech struct {
	Text  *string `json:"text"`
	Voice *string `json:"voice"`
}

// Check applies the rules of text and voice, in order, and returns the voice asked for,
// trimmed; "" leaves the choice to the tenant.
func (b *Speech) Check() (voice string, _ *FieldError) {
	switch {
	case b.Text == nil:
		return "", bad("text", "is required")
	case !utf8.ValidString(*b.Text) || utf8.RuneCountInString(*b.Text) > MaxSpeechText:
		return "", bad("text", fmt.Sprintf("must be valid UTF-8 of at most %d characters", MaxSpeechText))
	case strings.TrimSpace(*b.Text) == "":
		return "", bad("text", "has nothing to say")
	case b.Voice != nil && strings.TrimSpace(*b.Voice) == "":
		return "", bad("voice", "is empty; leave it out for the tenant's voice")
	case b.Voice != nil:
		return strings.TrimSpace(*b.Voice), nil
	}
	return "", nil
}
