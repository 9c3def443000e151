package redisstore

import (
	"bytes"
	"testing"
)

// BenchmarkSealTurn measures the sealing alone of a turn's batch of four events (some 600
// bytes) and their opening, as AppendEvents and ReadEvents do it, without Redis.
func BenchmarkSealTurn(b *testing.B) {
	s := newSealer(bytes.Repeat([]byte{7}, 32))
	const stream = "engine:turn:{0f6c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f}"
	data := [][]byte{make([]byte, 90), make([]byte, 35), make([]byte, 35), make([]byte, 440)}
	for b.Loop() {
		a := s.aead(stream)
		var sealed [4][]byte
		for i, d := range data {
			sealed[i] = seal(a, d, stream)
		}
		a = s.aead(stream)
		for _, d := range sealed {
			if _, err := open(a, d, stream); err != nil {
				b.Fatal(err)
			}
		}
	}
}
