package vad_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/convengine/engine/audio/vad"
)

// phrases make a long utterance, about 3 s each.
var phrases = []string{
	"I would like to transfer two hundred dollars from my checking account",
	"to the savings account that I opened last year with my wife",
	"and then I want to know the balance of both accounts",
	"please also tell me when my next credit card payment is due",
	"and whether there were any unusual charges on it this month",
	"I think somebody used my card at a gas station in another town",
	"if that is the case please block the card and send me a new one",
	"my account number ends in four five six seven if you need it",
	"thank you very much for your help with all of this today",
}

// conversation speaks phrases one after the other with pause between them, over room noise
// at noise dBFS with a second of it before and after, and returns the audio and where each
// phrase is.
func conversation(t *testing.T, pause time.Duration, noise float64) ([]int16, []vad.Segment) {
	var spoken [][]int16
	n := 2 * rate
	for _, p := range phrases {
		s := speak(t, p)
		spoken = append(spoken, s)
		n += len(s)
	}
	n += (len(phrases) - 1) * samples(pause)
	x := room(newRand(40), n, noise)
	var where []vad.Segment
	at := rate
	for _, s := range spoken {
		add(x, at, floats(s))
		where = append(where, vad.Segment{Start: at, End: at + len(s)})
		at += len(s) + samples(pause)
	}
	return pcm16(x), where
}

// The speech is at about -22 dBFS.
var conversationNoise = []float64{-55, -35}

func TestSegmentsLongUtterance(t *testing.T) {
	for _, noise := range conversationNoise {
		t.Run(fmt.Sprintf("room noise at %g dBFS", noise), func(t *testing.T) {
			testLongUtterance(t, noise)
		})
	}
}

func testLongUtterance(t *testing.T, noise float64) {
	pcm, phrases := conversation(t, 400*time.Millisecond, noise)
	// Pauses shorter than MinSilence are inside the utterance.
	want := []vad.Segment{{phrases[0].Start, phrases[len(phrases)-1].End}}
	if d := want[0].End - want[0].Start; d < 30*rate {
		t.Fatalf("the utterance is %s long, want 30 s", ms(d))
	}
	checkSegments(t, vad.Segments(pcm, nil), want, samples(tolerance))
}

func TestSegmentsPhrases(t *testing.T) {
	for _, noise := range conversationNoise {
		t.Run(fmt.Sprintf("room noise at %g dBFS", noise), func(t *testing.T) {
			pcm, phrases := conversation(t, 1200*time.Millisecond, noise)
			checkSegments(t, vad.Segments(pcm, nil), phrases, samples(tolerance))
		})
	}
}
