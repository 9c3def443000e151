package vad_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/convengine/engine/audio/vad"
)

// frame is the 20 ms a voice socket sends at a time.
var frame = samples(20 * time.Millisecond)

// timedEvent is an event and the number of samples written when it was reported.
type timedEvent struct {
	vad.Event
	at int
}

func (e timedEvent) String() string { return fmt.Sprintf("%v at %s", e.Event, ms(e.at)) }

// stream writes pcm to d in chunks of n samples and returns the events reported.
func stream(d *vad.Detector, pcm []int16, n int) []timedEvent {
	var evs []timedEvent
	for at := 0; at < len(pcm); at += n {
		end := min(at+n, len(pcm))
		if ev := d.Write(pcm[at:end]); ev != vad.None {
			evs = append(evs, timedEvent{ev, end})
		}
	}
	return evs
}

// streamScenes are utterances with a second of background before and 1.5 s after. slack is
// how much later than MinSpeech+60ms SpeechStarted may come: at 10 dB SNR in white noise, the
// weak consonant that starts "five" is under the noise, and the speech is heard from its vowel.
var streamScenes = []struct {
	name  string
	build func(speech []int16) ([]int16, vad.Segment)
	slack time.Duration
}{
	{"digital silence", func(speech []int16) ([]int16, vad.Segment) {
		return utterance15(speech, nil)
	}, 0},
	{"room noise at -50 dBFS", func(speech []int16) ([]int16, vad.Segment) {
		r := newRand(50)
		return utterance15(speech, func(n int) []float64 { return room(r, n, -50) })
	}, 0},
	{"white noise 20 dB SNR", func(speech []int16) ([]int16, vad.Segment) {
		r := newRand(51)
		return utterance15(speech, atSNR(speech, 20, func(n int, l float64) []float64 { return white(r, n, l) }))
	}, 0},
	{"white noise 10 dB SNR", func(speech []int16) ([]int16, vad.Segment) {
		r := newRand(53)
		return utterance15(speech, atSNR(speech, 10, func(n int, l float64) []float64 { return white(r, n, l) }))
	}, 100 * time.Millisecond},
	{"room noise 10 dB SNR", func(speech []int16) ([]int16, vad.Segment) {
		r := newRand(52)
		return utterance15(speech, atSNR(speech, 10, func(n int, l float64) []float64 { return room(r, n, l) }))
	}, 0},
	{"60 Hz hum at -30 dBFS and a DC offset", func(speech []int16) ([]int16, vad.Segment) {
		return utterance15(speech, func(n int) []float64 { return offset(hum(n, 60, -30), -3000) })
	}, 0},
}

// utterance15 is [utterance] with 1.5 s after the speech, time for SpeechEnded.
func utterance15(speech []int16, noise func(n int) []float64) ([]int16, vad.Segment) {
	pcm, where := utterance(append(speech, make([]int16, rate/2)...), noise)
	where[0].End -= rate / 2
	return pcm, where[0]
}

func TestDetectorTiming(t *testing.T) {
	const (
		startLate = vad.DefaultMinSpeech + 60*time.Millisecond
		endLate   = vad.DefaultMinSilence + 100*time.Millisecond
	)
	for _, text := range testPhrases {
		for _, sc := range streamScenes {
			t.Run(text+"/"+sc.name, func(t *testing.T) {
				pcm, truth := sc.build(speak(t, text))
				d := vad.NewDetector(nil)
				evs := stream(d, pcm, frame)
				t.Logf("speech %s, events %v, segment %s", segString([]vad.Segment{truth}), evs, segString([]vad.Segment{d.Segment()}))
				if len(evs) != 2 || evs[0].Event != vad.SpeechStarted || evs[1].Event != vad.SpeechEnded {
					t.Fatalf("events %v, want SpeechStarted and SpeechEnded", evs)
				}
				if late := evs[0].at - truth.Start; late < 0 || late > samples(startLate+sc.slack) {
					t.Errorf("SpeechStarted %s after the speech started, want 0 to %v", ms(late), startLate+sc.slack)
				}
				if late := evs[1].at - truth.End; late < 0 || late > samples(endLate) {
					t.Errorf("SpeechEnded %s after the speech ended, want 0 to %v", ms(late), endLate)
				}
				if d.Speaking() {
					t.Error("Speaking after SpeechEnded")
				}
			})
		}
	}
}

// TestDetectorChunks requires the same events and segment whatever the size of the writes, and
// the segment Segments finds.
func TestDetectorChunks(t *testing.T) {
	pcm, _ := streamScenes[1].build(speak(t, phrase))
	want := vad.Segments(pcm, nil)
	if len(want) != 1 {
		t.Fatalf("Segments found %s", segString(want))
	}
	var first []timedEvent // from writes of one sample, reported at the end of their frame
	for _, n := range []int{1, 7, samples(7 * time.Millisecond), frame, samples(33 * time.Millisecond), samples(100 * time.Millisecond)} {
		d := vad.NewDetector(nil)
		evs := stream(d, pcm, n)
		if first == nil {
			first = evs
		}
		if len(evs) != 2 {
			t.Fatalf("writes of %d samples: events %v", n, evs)
		}
		// The write that completes an event's frame reports it.
		for i, ev := range evs {
			if ev.Event != first[i].Event || ev.at < first[i].at || ev.at >= first[i].at+n {
				t.Errorf("writes of %d samples: %v, want %v", n, ev, first[i])
			}
		}
		if got := d.Segment(); got != want[0] {
			t.Errorf("writes of %d samples: segment %s, Segments found %s", n, segString([]vad.Segment{got}), segString(want))
		}
	}
}

// TestDetectorNoise feeds 10 s of noise that must never start speech.
func TestDetectorNoise(t *testing.T) {
	n := samples(10 * time.Second)
	for _, level := range []float64{-60, -50, -40, -32, -25} {
		for _, src := range []struct {
			name string
			gen  func(n int, dBFS float64) []float64
		}{
			{"room", func(n int, l float64) []float64 { return room(newRand(60), n, l) }},
			{"white", func(n int, l float64) []float64 { return white(newRand(61), n, l) }},
			{"pink", func(n int, l float64) []float64 { return pink(newRand(62), n, l) }},
			{"rumble", func(n int, l float64) []float64 { return rumble(newRand(67), n, l) }},
			{"hum", func(n int, l float64) []float64 { return hum(n, 50, l) }},
		} {
			t.Run(fmt.Sprintf("%s at %g dBFS", src.name, level), func(t *testing.T) {
				pcm := pcm16(src.gen(n, level))
				for _, fd := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond} {
					d := vad.NewDetector(&vad.Options{FrameDuration: fd})
					if evs := stream(d, pcm, frame); len(evs) != 0 {
						t.Errorf("%v frames: events %v", fd, evs)
					}
				}
			})
		}
	}
}

// TestDetectorNoiseGrows switches a fan on: 20 dB more noise at once. It sounds like speech
// until the minimum tracker's window is full of it; the detector must then follow it.
func TestDetectorNoiseGrows(t *testing.T) {
	x := room(newRand(63), samples(12*time.Second), -60)
	add(x, 2*rate, room(newRand(64), samples(10*time.Second), -40))
	d := vad.NewDetector(nil)
	evs := stream(d, pcm16(x), frame)
	t.Logf("events %v, noise floor %.1f dBFS", evs, d.Noise())
	if d.Speaking() || len(evs) > 2 {
		t.Fatalf("events %v, want at most one utterance that ended", evs)
	}
	if len(evs) == 2 && evs[1].at > samples(2*time.Second+4*time.Second) {
		t.Errorf("the louder noise was speech until %s", ms(evs[1].at))
	}
}

func TestDetectorReset(t *testing.T) {
	pcm, _ := streamScenes[1].build(speak(t, phrase))
	d := vad.NewDetector(nil)
	first := stream(d, pcm, frame)
	seg := d.Segment()
	// Cut the second pass in the middle of the speech, then start over.
	stream(d, pcm[:len(pcm)/2], frame)
	if !d.Speaking() {
		t.Fatal("not speaking in the middle of the speech")
	}
	d.Reset()
	if d.Speaking() || d.Segment() != (vad.Segment{}) {
		t.Fatalf("after Reset: speaking %v, segment %v", d.Speaking(), d.Segment())
	}
	if again := stream(d, pcm, frame); fmt.Sprint(again) != fmt.Sprint(first) || d.Segment() != seg {
		t.Errorf("after Reset: %v %v, want %v %v", again, d.Segment(), first, seg)
	}
}

// TestDetectorTwoUtterances hears two questions apart by 1.5 s.
func TestDetectorTwoUtterances(t *testing.T) {
	s := speak(t, phrase)
	x := room(newRand(65), 2*len(s)+4*rate, -50)
	add(x, rate, floats(s))
	add(x, 2*rate+len(s)+rate/2, floats(s))
	d := vad.NewDetector(nil)
	evs := stream(d, pcm16(x), frame)
	want := []vad.Event{vad.SpeechStarted, vad.SpeechEnded, vad.SpeechStarted, vad.SpeechEnded}
	if fmt.Sprint(eventsOf(evs)) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", evs, want)
	}
	if got := d.Segment(); abs(got.Start-(2*rate+len(s)+rate/2)) > samples(tolerance) {
		t.Errorf("second segment %v", got)
	}
}

func eventsOf(evs []timedEvent) []vad.Event {
	var out []vad.Event
	for _, e := range evs {
		out = append(out, e.Event)
	}
	return out
}

// TestDetectorWriteAllocs requires Write not to allocate.
func TestDetectorWriteAllocs(t *testing.T) {
	pcm := pcm16(room(newRand(66), rate, -40))
	d := vad.NewDetector(nil)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		d.Write(pcm[i : i+frame])
		i = (i + frame) % (len(pcm) - frame)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Write", allocs)
	}
}

func TestEventString(t *testing.T) {
	for ev, want := range map[vad.Event]string{vad.None: "None", vad.SpeechStarted: "SpeechStarted", vad.SpeechEnded: "SpeechEnded", 7: "Event(7)"} {
		if got := ev.String(); got != want {
			t.Errorf("%d: %q, want %q", int(ev), got, want)
		}
	}
}
