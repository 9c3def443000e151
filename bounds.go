package engine

import (
	"time"
)

// The engine key is public and any X-Token is accepted, so whatever a stranger can start is
// bounded: these are the bounds a request can meet besides the rate limits, and their defaults.
const (
	defaultMaxConcurrentTurns             = 1024
	defaultMaxConcurrentSyntheses         = 32
	defaultMaxSynthesesPerUser            = 4
	defaultMaxTranscriptions              = 8
	defaultMaxTranscriptionsPerUser       = 2
	defaultHeaderMemory             int64 = 16 << 20
	defaultWriteTimeout                   = 10 * time.Second
)

// Names of the bounds, in [OverloadEvent].
const (
	BoundTurns              = "turns"               // Config.MaxConcurrentTurns
	BoundSyntheses          = "syntheses"           // Config.MaxConcurrentSyntheses
	BoundUserSyntheses      = "user_syntheses"      // Config.MaxSynthesesPerUser
	BoundTranscriptions     = "transcriptions"      // Config.MaxConcurrentTranscriptions
	BoundUserTranscriptions = "user_transcriptions" // Config.MaxTranscriptionsPerUser
	BoundSockets            = "sockets"             // voice.Options.MaxSockets
	BoundUserSockets        = "user_sockets"        // voice.Options.MaxSocketsPerUser
	BoundAudioMemory        = "audio_memory"        // voice.Options.AudioMemory
	BoundResumes            = "resumes"             // turns resumed at once (GET /engine/turns/{id})
	BoundSessions           = "sessions"            // the SessionStore is full (ErrStoreFull): create-session is refused
	BoundTurnLog            = "turn_log"            // the TurnLog is full (ErrStoreFull): a turn runs without being kept
	BoundHeaders            = "header_memory"       // header bytes of connections still sending them (Engine.Listener)
)

// OverloadEvent describes work a bound refused.
type OverloadEvent struct {
	Bound     string // BoundTurns, BoundSyntheses, ...
	RequestID string
	Tenant    string
}
