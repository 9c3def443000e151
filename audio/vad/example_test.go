package vad_test

import (
	"fmt"

	"github.com/convengine/engine/audio/vad"
)

// A voice socket hands each 20 ms frame to a Detector: only speech, not the room's noise,
// interrupts the answer being spoken, and the end of speech is heard without the client
// saying so.
func ExampleDetector() {
	var frames [][]int16 // 320 samples of 16 kHz each, as they arrive
	d := vad.NewDetector(nil)
	for _, f := range frames {
		switch d.Write(f) {
		case vad.SpeechStarted:
			fmt.Println("barge-in: stop speaking the answer")
		case vad.SpeechEnded:
			s := d.Segment()
			fmt.Printf("end of speech: the utterance is samples %d to %d\n", s.Start, s.End)
		}
	}
}

// A recogniser gets the utterance without the silence around it.
func ExampleTrim() {
	var upload []int16 // 16 kHz
	speech := vad.Trim(upload, nil)
	if speech == nil {
		fmt.Println("no speech")
		return
	}
	fmt.Printf("%d samples of speech and padding\n", len(speech))
}
