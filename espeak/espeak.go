package espeak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/proc"
)

// ErrNotInstalled is returned by [New] when the espeak-ng program cannot be found.
var ErrNotInstalled = errors.New("espeak: the espeak-ng program is not installed (Debian package espeak-ng)")

// Options configure a [Synthesizer]. The zero value, or nil, is the defaults.
type Options struct {
	// Program is the espeak-ng program to run; default "espeak-ng", looked up on PATH.
	Program string
	// Rate is the speed in words per minute, from 80 to 450; 0 means espeak-ng's default, 175.
	Rate int
	// Pitch is from 0 to 99; 0 means espeak-ng's default, 50.
	Pitch int
}

// Synthesizer is an [engine.Synthesizer] over espeak-ng. It is safe for concurrent use; each
// call runs its own process.
type Synthesizer struct {
	program string
	rate    int
	pitch   int

	mu     sync.Mutex
	voices *voiceList // nil until listed successfully
}

var (
	_ engine.Synthesizer  = (*Synthesizer)(nil)
	_ engine.VoiceChooser = (*Synthesizer)(nil)
)

// New returns a Synthesizer, or [ErrNotInstalled] when the program is not found. opts may be
// nil.
func New(opts *Options) (*Synthesizer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Program == "" {
		o.Program = "espeak-ng"
	}
	switch {
	case o.Rate != 0 && (o.Rate < 80 || o.Rate > 450):
		return nil, fmt.Errorf("espeak: Rate %d is not from 80 to 450 words per minute", o.Rate)
	case o.Pitch < 0 || o.Pitch > 99:
		return nil, fmt.Errorf("espeak: Pitch %d is not from 0 to 99", o.Pitch)
	}
	path, err := exec.LookPath(o.Program)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	return &Synthesizer{program: path, rate: o.Rate, pitch: o.Pitch}, nil
}

// defaultRate is espeak-ng's sample rate, reported for a line that gave no samples.
const defaultRate = 22050

// Synthesize speaks text with voice ("" is espeak-ng's default voice). The returned audio
// streams while espeak-ng writes it; closing it, or cancelling ctx, kills the process. It
// returns an error wrapping [engine.ErrUnknownVoice] for a voice espeak-ng does not list.
func (s *Synthesizer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	args := []string{"--stdout", "-b", "1"}
	if voice != "" {
		v, err := s.resolve(ctx, voice)
		if err != nil {
			return nil, err
		}
		args = append(args, "-v", v)
	}
	if s.rate != 0 {
		args = append(args, "-s", strconv.Itoa(s.rate))
	}
	if s.pitch != 0 {
		args = append(args, "-p", strconv.Itoa(s.pitch))
	}
	text = speakableText(text)
	if text == "" {
		return &engine.Audio{SampleRate: defaultRate, PCM: io.NopCloser(strings.NewReader(""))}, nil
	}

	cmd := exec.CommandContext(ctx, s.program, args...)
	cmd.Stdin = strings.NewReader(text + "\n")
	stderr := &proc.Tail{Max: 512}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("espeak: starting espeak-ng: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("espeak: starting espeak-ng: %w", err)
	}
	p := &process{ctx: ctx, cmd: cmd, out: out, stderr: stderr}
	h, err := audio.ReadWAVHeader(out)
	if err != nil {
		if werr := p.wait(); werr != nil {
			return nil, werr
		}
		if p.read == 0 { // nothing to say, such as a line of punctuation
			return &engine.Audio{SampleRate: defaultRate, PCM: io.NopCloser(strings.NewReader(""))}, nil
		}
		return nil, fmt.Errorf("espeak: reading espeak-ng's output: %w", err)
	}
	if h.Channels != 1 || h.BitsPerSample != 16 {
		p.Close()
		return nil, fmt.Errorf("espeak: espeak-ng wrote %d channels of %d bits; want 16-bit mono", h.Channels, h.BitsPerSample)
	}
	return &engine.Audio{SampleRate: h.SampleRate, PCM: p}, nil
}

// speakableText removes control characters and invalid UTF-8, which espeak-ng has no use for.
func speakableText(s string) string {
	s = strings.ToValidUTF8(s, " ")
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t') {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// process is the output of one espeak-ng run. Read and Close may be called concurrently:
// Close kills the process, which ends a Read in progress.
type process struct {
	ctx    context.Context
	cmd    *exec.Cmd
	out    io.Reader
	stderr *proc.Tail
	read   int64

	once    sync.Once
	waitErr error
}

// Read reads the samples. At the end it reaps the process and reports its failure, if any.
func (p *process) Read(b []byte) (int, error) {
	n, err := p.out.Read(b)
	p.read += int64(n)
	if err == io.EOF {
		if werr := p.wait(); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// Close kills the process if it still runs and reaps it.
func (p *process) Close() error {
	p.cmd.Process.Kill() // after the process ended this is os.ErrProcessDone, never another process
	p.wait()
	return nil
}

func (p *process) wait() error {
	p.once.Do(func() {
		err := p.cmd.Wait()
		switch {
		case p.ctx.Err() != nil:
			p.waitErr = p.ctx.Err()
		case err != nil:
			p.waitErr = fmt.Errorf("espeak: espeak-ng failed: %w: %s", err, p.stderr.String())
		}
	})
	return p.waitErr
}
