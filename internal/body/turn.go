package body

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/convengine/engine/internal/locale"
)

// Bounds of a turn's body.
const (
	MaxHistory    = 100  // messages of the conversation so far
	MaxMessageLen = 8000 // characters of a transcript or a history message
	maxScreen     = 1024 // bytes of context.screen
)

var (
	conversationIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	countryPattern        = regexp.MustCompile(`^[A-Za-z]{2}$`)
)

// Turn is the body of POST /engine.
type Turn struct {
	Transcript  *string      `json:"transcript"`
	AudioBase64 *string      `json:"audio_base64"`
	Mode        *string      `json:"mode"`
	Messages    []Message    `json:"messages"`
	Context     *TurnContext `json:"context"`
	Meta        *TurnMeta    `json:"meta"`
}

// Message is one message of the conversation so far.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// TurnContext is what the app says of the user's situation.
type TurnContext struct {
	SessionID   string          `json:"sessionId"`
	Screen      json.RawMessage `json:"screen"`
	CountryCode string          `json:"country_code"`
}

// TurnMeta is what the client says of itself and of the answer's language.
type TurnMeta struct {
	SDKVersion string `json:"sdkVersion"`
	Platform   string `json:"platform"`
	Locale     string `json:"locale"`
}

// CheckedTurn is what a turn's body asks for, once its fields passed their rules.
type CheckedTurn struct {
	Mode           string // "text", "voice" or "home"
	Transcript     string // trimmed
	History        []Message
	ConversationID string // "" for a new conversation
	Country        string // upper case, "" for none
	Screen         string // a string's value, or an object's JSON
	Locale         string // "" for the tenant's
}

// Check applies the rules of the body's fields, in order. audio reports that the turn has its
// user's speech from elsewhere than the body (a transport's samples), which stands for a
// transcript.
func (b *Turn) Check(audio bool) (*CheckedTurn, *FieldError) {
	c := &CheckedTurn{Mode: "text"}
	if b.Mode != nil {
		switch m := *b.Mode; m {
		case "text", "voice", "home":
			c.Mode = m
		default:
			return nil, bad("mode", `must be "text", "voice" or "home"`)
		}
	}
	if b.Transcript != nil {
		s := strings.TrimSpace(*b.Transcript)
		if !utf8.ValidString(s) || utf8.RuneCountInString(s) > MaxMessageLen {
			return nil, bad("transcript", fmt.Sprintf("must be valid UTF-8 of at most %d characters", MaxMessageLen))
		}
		c.Transcript = s
	}
	if c.Mode != "home" && c.Transcript == "" && b.AudioBase64 == nil && !audio {
		return nil, bad("transcript", "is required (or audio_base64) unless mode is \"home\"")
	}
	if len(b.Messages) > MaxHistory {
		return nil, bad("messages", fmt.Sprintf("has more than %d items", MaxHistory))
	}
	for i, m := range b.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if m.Role != "user" && m.Role != "assistant" {
			return nil, bad(field+".role", `must be "user" or "assistant"`)
		}
		if !utf8.ValidString(m.Content) || utf8.RuneCountInString(m.Content) > MaxMessageLen {
			return nil, bad(field+".content", fmt.Sprintf("must be valid UTF-8 of at most %d characters", MaxMessageLen))
		}
	}
	c.History = b.Messages
	if x := b.Context; x != nil {
		if x.SessionID != "" && !conversationIDPattern.MatchString(x.SessionID) {
			return nil, bad("context.sessionId", "must be 1 to 128 letters, digits or ._:-")
		}
		c.ConversationID = x.SessionID
		if x.CountryCode != "" && !countryPattern.MatchString(x.CountryCode) {
			return nil, bad("context.country_code", "must be an ISO 3166-1 alpha-2 code")
		}
		c.Country = strings.ToUpper(x.CountryCode)
		if len(x.Screen) > 0 && string(x.Screen) != "null" {
			var s string
			if json.Unmarshal(x.Screen, &s) != nil {
				s = string(x.Screen) // an object describing the screen reaches the prompt as JSON
			}
			if len(s) > maxScreen {
				return nil, bad("context.screen", fmt.Sprintf("is longer than %d bytes", maxScreen))
			}
			c.Screen = s
		}
	}
	if m := b.Meta; m != nil && m.Locale != "" {
		if !locale.Valid(m.Locale) {
			return nil, bad("meta.locale", "must be a BCP 47 language tag such as \"en-US\"")
		}
		c.Locale = m.Locale
	}
	return c, nil
}
