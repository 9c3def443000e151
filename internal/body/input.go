package body

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
)

// Bounds of a turn's audio: 16 kHz mono 16-bit PCM, at most a minute of it per turn or
// utterance.
const (
	SampleRate      = 16000
	MaxAudioSeconds = 60
)

// Input is a turn asked for in-process (Engine.Turn's TurnInput), as Go values. Turn makes it
// the body of POST /engine, whose rules then apply as to any body.
type Input struct {
	Transcript     string
	Audio          []byte  // a WAV file, instead of Transcript
	Samples        []int16 // the user's speech at SampleRate, instead of Transcript or Audio
	TurnID         string  // a UUID, or "" for a new one
	Mode           string
	Messages       []Message
	ConversationID string
	Screen         string
	CountryCode    string
	Locale         string
}

// Turn applies the rules of what only an in-process turn gives (audio as a file or samples, a
// turn id), in order, and returns the body in asks for.
func (in *Input) Turn() (*Turn, *FieldError) {
	b := &Turn{Context: &TurnContext{SessionID: in.ConversationID, CountryCode: in.CountryCode}}
	if in.Transcript != "" {
		b.Transcript = &in.Transcript
	}
	if in.Audio != nil && in.Transcript != "" {
		return nil, bad("audio", "and transcript cannot both be given")
	}
	if in.Samples != nil {
		switch {
		case in.Transcript != "" || in.Audio != nil:
			return nil, bad("samples", "and transcript or audio cannot both be given")
		case len(in.Samples) > MaxAudioSeconds*SampleRate:
			return nil, bad("samples", fmt.Sprintf("hold more than %d seconds of audio", MaxAudioSeconds))
		}
	}
	if in.TurnID != "" {
		if _, err := uuid.Parse(in.TurnID); err != nil || len(in.TurnID) != 36 {
			return nil, bad("turn_id", "must be a UUID")
		}
	}
	if in.Mode != "" {
		b.Mode = &in.Mode
	}
	b.Messages = in.Messages
	if in.Screen != "" {
		b.Context.Screen, _ = json.Marshal(in.Screen)
	}
	if in.Locale != "" {
		b.Meta = &TurnMeta{Locale: in.Locale}
	}
	return b, nil
}
