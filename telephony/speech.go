package telephony

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/verbalize"
)

// sentences cuts text into its sentences, the last one whether or not it ends.
func sentences(text string) []string {
	done, rest := verbalize.CutSentences(text)
	var out []string
	for _, s := range append(done, rest) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// playChunk is the audio gathered before it goes down the line: 100 ms at 8 kHz.
const playChunk = LineRate / 10

// synthesize speaks sentence with sp at the line's rate, resampled with a proper filter, and
// hands the audio to play as it comes, in chunks of playChunk; with play nil, it returns it
// whole instead.
func synthesize(ctx context.Context, sp *engine.Speaker, sentence string, play func([]int16) error) ([]int16, error) {
	speech, err := sp.Say(ctx, sentence)
	if err != nil {
		return nil, err
	}
	defer speech.PCM.Close()
	r := audio.NewResampler(speech.SampleRate, LineRate)
	buf := make([]byte, 4096)
	var all, out, in []int16
	odd := -1 // a byte of a sample split across reads
	for {
		n, rerr := speech.PCM.Read(buf)
		b := buf[:n]
		if odd >= 0 && n > 0 {
			in = append(in[:0], int16(uint16(odd)|uint16(b[0])<<8))
			out = r.Write(out, in)
			b, odd = b[1:], -1
		}
		if len(b)%2 == 1 {
			odd, b = int(b[len(b)-1]), b[:len(b)-1]
		}
		in = audio.AppendSamples(in[:0], b)
		out = r.Write(out, in)
		if rerr != nil {
			out = r.Flush(out)
		}
		if play == nil {
			all, out = append(all, out...), out[:0]
		} else if len(out) >= playChunk || (rerr != nil && len(out) > 0) {
			if err := play(out); err != nil {
				return nil, err
			}
			out = out[:0]
		}
		switch {
		case errors.Is(rerr, io.EOF):
			return all, nil
		case rerr != nil:
			return nil, rerr
		}
	}
}
