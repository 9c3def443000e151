package vad_test

import (
	"testing"
	"time"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/audio/vad"
)

func TestTrim(t *testing.T) {
	s := speak(t, phrase)
	pcm, truth := utterance(s, func(n int) []float64 { return room(newRand(70), n, -50) })
	for _, tt := range []struct {
		name    string
		o       *vad.Options
		padding time.Duration
	}{
		{"default padding", nil, vad.DefaultPadding},
		{"50 ms padding", &vad.Options{Padding: 50 * time.Millisecond}, 50 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := vad.Trim(pcm, tt.o)
			if len(got) == 0 {
				t.Fatal("Trim found no speech")
			}
			// Where got starts in pcm: it shares pcm's memory.
			start := -1
			for i := range pcm {
				if &pcm[i] == &got[0] {
					start = i
					break
				}
			}
			found := vad.Segment{Start: start, End: start + len(got)}
			want := vad.Segment{Start: truth[0].Start - samples(tt.padding), End: truth[0].End + samples(tt.padding)}
			checkSegments(t, []vad.Segment{found}, []vad.Segment{want}, samples(tolerance))
		})
	}
	t.Run("speech from the first sample", func(t *testing.T) {
		x := room(newRand(71), len(s)+rate, -50)
		add(x, 0, floats(s))
		pcm := pcm16(x)
		got := vad.Trim(pcm, nil)
		if len(got) == 0 || &got[0] != &pcm[0] {
			t.Fatalf("Trim does not start at the first sample")
		}
		if d := len(got) - len(s) - samples(vad.DefaultPadding); abs(d) > samples(tolerance) {
			t.Errorf("Trim kept %s, want the speech and the padding after it, %s", ms(len(got)), ms(len(s)+samples(vad.DefaultPadding)))
		}
	})
}

// TestOptions checks that each option does what it says.
func TestOptions(t *testing.T) {
	s := speak(t, phrase)
	pcm, truth := utterance(s, func(n int) []float64 { return room(newRand(72), n, -50) })
	for _, fd := range []time.Duration{10 * time.Millisecond, 30 * time.Millisecond} {
		t.Run("FrameDuration "+fd.String(), func(t *testing.T) {
			checkSegments(t, vad.Segments(pcm, &vad.Options{FrameDuration: fd}), truth, samples(tolerance))
		})
	}
	t.Run("Threshold above the speech", func(t *testing.T) {
		// The speech is about 30 dB above the noise.
		if segs := vad.Segments(pcm, &vad.Options{Threshold: 50}); len(segs) != 0 {
			t.Errorf("found %s", segString(segs))
		}
	})
	t.Run("MinSpeech longer than the speech", func(t *testing.T) {
		if segs := vad.Segments(pcm, &vad.Options{MinSpeech: 2 * time.Second}); len(segs) != 0 {
			t.Errorf("found %s", segString(segs))
		}
	})
	t.Run("MinSilence shorter than the pauses", func(t *testing.T) {
		long, phrases := conversation(t, 400*time.Millisecond, -55)
		checkSegments(t, vad.Segments(long, &vad.Options{MinSilence: 300 * time.Millisecond}), phrases, samples(tolerance))
	})
	t.Run("Detector at 8 kHz", func(t *testing.T) {
		pcm8k := audio.Resample(pcm, rate, 8000)
		d := vad.NewDetector(&vad.Options{SampleRate: 8000})
		var evs []vad.Event
		for i := 0; i+160 <= len(pcm8k); i += 160 {
			if ev := d.Write(pcm8k[i : i+160]); ev != vad.None {
				evs = append(evs, ev)
			}
		}
		got := d.Segment()
		got.Start, got.End = 2*got.Start, 2*got.End
		if len(evs) != 2 {
			t.Fatalf("events %v", evs)
		}
		checkSegments(t, []vad.Segment{got}, truth, samples(tolerance))
	})
}
