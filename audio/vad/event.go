package vad

import "strconv"

// Event is a change the [Detector] reports.
type Event int

const (
	// None: nothing changed.
	None Event = iota
	// SpeechStarted: MinSpeech of voiced frames were heard; the speech began at the start of
	// [Detector.Segment].
	SpeechStarted
	// SpeechEnded: MinSilence of silence followed the speech, which ended at the end of
	// [Detector.Segment].
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
