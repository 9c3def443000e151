package vad

import "strconv"

// Event is a change the [Detector] reports.
type Event int

const (
	// None is no change.
	None Event = iota
	// SpeechStarted is told once MinSpeech of voiced frames were heard, that much after the
	// speech began: at the start of [Detector.Segment].
	SpeechStarted
	// SpeechEnded is told after MinSilence without a voiced frame; the speech ended at the end
	// of [Detector.Segment].
	SpeechEnded
)

func (e Event) String() string {
	switch e {
	case None:
		return "None"
	case SpeechStarted:
		return "SpeechStarted"
	case SpeechEnded:
		return "SpeechEnded"
	}
	return "Event(" + strconv.Itoa(int(e)) + ")"
}
