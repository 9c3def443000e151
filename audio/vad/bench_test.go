package vad_test

import (
	"testing"
	"time"

	"github.com/convengine/engine/audio/vad"
)

// benchAudio is 10 s of 16 kHz audio: questions apart by a second over room noise at -50 dBFS.
func benchAudio(b *testing.B) []int16 {
	n := samples(10 * time.Second)
	x := room(newRand(90), n, -50)
	for at, i := rate/2, 0; ; i++ {
		s := speak(b, phrases[i%len(phrases)])
		if at+len(s) > n {
			break
		}
		add(x, at, floats(s))
		at += len(s) + rate
	}
	return pcm16(x)
}

// realTime reports how many times faster than real time audio of d was analysed, per op.
func realTime(b *testing.B, d time.Duration) {
	b.ReportMetric(float64(d)*float64(b.N)/float64(b.Elapsed()), "x-realtime")
}

func BenchmarkSegments(b *testing.B) {
	pcm := benchAudio(b)
	b.SetBytes(int64(2 * len(pcm)))
	b.ReportAllocs()
	for b.Loop() {
		vad.Segments(pcm, nil)
	}
	realTime(b, 10*time.Second)
}

// BenchmarkDetectorWrite measures one 20 ms frame of a voice socket.
func BenchmarkDetectorWrite(b *testing.B) {
	pcm := benchAudio(b)
	d := vad.NewDetector(nil)
	b.SetBytes(int64(2 * frame))
	b.ReportAllocs()
	at := 0
	for b.Loop() {
		d.Write(pcm[at : at+frame])
		if at += frame; at+frame > len(pcm) {
			at = 0
		}
	}
	realTime(b, 20*time.Millisecond)
}
