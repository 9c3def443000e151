package vad_test

import (
	"math"
	"testing"
	"time"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/audio/vad"
)

// FuzzSegments feeds any samples with any options: Segments must not panic, and must return
// segments inside the samples, in order and apart; Trim and the Detector must agree with
// what they may.
func FuzzSegments(f *testing.F) {
	// Seeds are short, for the fuzzer takes time to minimise long inputs; a low rate gives them
	// many frames all the same: 10 samples to a frame of 5 ms at 2 kHz. The tone is found as
	// speech from sample 100 to 300.
	n := 400
	tone := make([]float64, n)
	for i := n / 4; i < n*3/4; i++ {
		tone[i] = 8000 * math.Sin(2*math.Pi*300*float64(i)/2000)
	}
	f.Add([]byte{}, uint16(0), uint8(0), uint16(0), uint16(0), uint8(0))
	f.Add(audio.AppendPCM(nil, make([]int16, n)), uint16(0), uint8(0), uint16(0), uint16(0), uint8(0))
	f.Add(audio.AppendPCM(nil, pcm16(white(newRand(80), n, -30))), uint16(2000), uint8(5), uint16(10), uint16(20), uint8(36))
	f.Add(audio.AppendPCM(nil, pcm16(add(room(newRand(81), n, -50), 0, tone))), uint16(2000), uint8(5), uint16(10), uint16(20), uint8(12))
	f.Add(audio.AppendPCM(nil, pcm16(offset(make([]float64, n), 40000))), uint16(100), uint8(255), uint16(1), uint16(1), uint8(255))
	f.Fuzz(func(t *testing.T, data []byte, sampleRate uint16, frameMs uint8, minSpeechMs, minSilenceMs uint16, threshold uint8) {
		pcm := audio.PCMFromBytes(data)
		o := &vad.Options{
			SampleRate:    int(sampleRate),
			FrameDuration: time.Duration(frameMs) * time.Millisecond,
			MinSpeech:     time.Duration(minSpeechMs) * time.Millisecond,
			MinSilence:    time.Duration(minSilenceMs) * time.Millisecond,
			Padding:       time.Duration(minSpeechMs) * time.Millisecond,
			Threshold:     float64(threshold) / 4,
		}
		segs := vad.Segments(pcm, o)
		end := 0
		for i, s := range segs {
			if s.Start < end || s.Start >= s.End || s.End > len(pcm) {
				t.Fatalf("segment %d of %d samples: %v, after %d", i, len(pcm), s, end)
			}
			end = s.End
		}
		trimmed := vad.Trim(pcm, o)
		if (trimmed == nil) != (len(segs) == 0) || len(trimmed) > len(pcm) {
			t.Fatalf("Trim kept %d of %d samples, with %d segments", len(trimmed), len(pcm), len(segs))
		}
		if len(segs) > 0 && len(trimmed) < segs[len(segs)-1].End-segs[0].Start {
			t.Fatalf("Trim kept %d samples, less than the speech from %d to %d", len(trimmed), segs[0].Start, segs[len(segs)-1].End)
		}
		d := vad.NewDetector(o)
		for len(pcm) > 0 {
			n := min(len(pcm), 1+int(frameMs)*7)
			d.Write(pcm[:n])
			pcm = pcm[n:]
		}
		if s := d.Segment(); s.Start < 0 || s.End < s.Start || s.End > len(data)/2 {
			t.Fatalf("Detector segment %v of %d samples", s, len(data)/2)
		}
	})
}
