package flite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/proc"
)

// ErrNotInstalled is returned by [New] when the flite program cannot be found.
var ErrNotInstalled = errors.New("flite: the flite program is not installed (Debian package flite)")

// DefaultVoice is the voice of English locales: of flite's voices, the one the engine's
// recogniser heard best, in silence and in noise.
const DefaultVoice = "kal16"

// Options configure a [Synthesizer]. The zero value, or nil, is the defaults.
type Options struct {
	// Program is the flite program to run; default "flite", looked up on PATH.
	Program string
	// Voice is the voice of English locales and of requests without one; default
	// [DefaultVoice].
	Voice string
}

// Synthesizer is an [engine.Synthesizer] over flite. It is safe for concurrent use; each call
// runs its own process.
type Synthesizer struct {
	program string
	voice   string
	voices  []string
}

var (
	_ engine.Synthesizer  = (*Synthesizer)(nil)
	_ engine.VoiceChooser = (*Synthesizer)(nil)
)

// listTimeout bounds `flite -lv`.
const listTimeout = 10 * time.Second

// New returns a Synthesizer, or an error wrapping [ErrNotInstalled] when the program is not
// found. It lists the program's voices once. opts may be nil.
func New(opts *Options) (*Synthesizer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Program == "" {
		o.Program = "flite"
	}
	if o.Voice == "" {
		o.Voice = DefaultVoice
	}
	path, err := exec.LookPath(o.Program)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-lv").Output()
	if err != nil {
		return nil, fmt.Errorf("flite: listing the voices: %w", err)
	}
	voices := parseVoices(string(out))
	if !slices.Contains(voices, o.Voice) {
		return nil, fmt.Errorf("flite: voice %q: %w (flite has %s)", o.Voice, engine.ErrUnknownVoice, strings.Join(voices, ", "))
	}
	return &Synthesizer{program: path, voice: o.Voice, voices: voices}, nil
}

// parseVoices reads `flite -lv`: "Voices available: kal awb_time kal16 awb rms slt".
func parseVoices(out string) []string {
	_, list, _ := strings.Cut(out, ":")
	return strings.Fields(list)
}

// Voices returns the names of flite's voices.
func (s *Synthesizer) Voices() []string { return slices.Clone(s.voices) }

// Builtin reports whether voice is one of those built into Debian's flite program (kal, kal16,
// awb, awb_time, rms, slt), installed or not: a host that finds no flite tells one who asks for
// such a voice what to install rather than that the voice does not exist.
func Builtin(voice string) bool {
	switch voice {
	case "kal", "kal16", "awb", "awb_time", "rms", "slt":
		return true
	}
	return false
}

// Has reports whether voice is one of flite's.
func (s *Synthesizer) Has(voice string) bool { return slices.Contains(s.voices, voice) }

// VoiceFor returns the voice of an English locale ("en", "en-US", "en-GB" …), and "" for any
// other language, which flite cannot speak.
func (s *Synthesizer) VoiceFor(locale string) string {
	lang, _, _ := strings.Cut(strings.ToLower(locale), "-")
	if lang == "en" {
		return s.voice
	}
	return ""
}

// Synthesize speaks text with voice ("" is the default voice). Closing the audio, or
// cancelling ctx, kills the process. It returns an error wrapping [engine.ErrUnknownVoice]
// for a voice flite does not have.
func (s *Synthesizer) Synthesize(ctx context.Context, text, voice string) (*engine.Audio, error) {
	if voice == "" {
		voice = s.voice
	}
	if !s.Has(voice) {
		return nil, fmt.Errorf("flite: voice %q: %w", voice, engine.ErrUnknownVoice)
	}
	text = speakableText(text)
	if text == "" {
		return &engine.Audio{SampleRate: 16000, PCM: io.NopCloser(strings.NewReader(""))}, nil
	}
	// The text is the argument of -t, which takes it whole, even when it starts with a dash.
	// (With -f, flite writes a streamed file's samples only by seeking back into it, and a
	// pipe cannot be sought: only the header arrives.)
	cmd := exec.CommandContext(ctx, s.program, "-voice", voice, "-t", text, "-o", "/dev/stdout")
	stderr := &proc.Tail{Max: 512}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("flite: starting flite: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("flite: starting flite: %w", err)
	}
	p := &process{ctx: ctx, cmd: cmd, out: bufio.NewReaderSize(out, 32<<10), stderr: stderr}
	h, err := audio.ReadWAVHeader(p.out)
	if err != nil {
		if werr := p.wait(); werr != nil {
			return nil, werr
		}
		return nil, fmt.Errorf("flite: reading flite's output: %w", err)
	}
	if h.Channels != 1 || h.BitsPerSample != 16 {
		p.Close()
		return nil, fmt.Errorf("flite: flite wrote %d channels of %d bits; want 16-bit mono", h.Channels, h.BitsPerSample)
	}
	if h.DataSize >= 0 {
		p.left = h.DataSize
	} else {
		p.left = -1
	}
	return &engine.Audio{SampleRate: h.SampleRate, PCM: p}, nil
}

// speakableText is text flite can read: its English front end knows ASCII only, so letters
// with accents lose them ("Zoë" is read "Zoe") and other characters become spaces.
func speakableText(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, " ") {
		switch {
		case r < 0x80 && (r == '\n' || r == '\t' || !unicode.IsControl(r)):
			b.WriteRune(r)
		case unicode.IsLetter(r):
			b.WriteString(fold(r))
		default:
			b.WriteByte(' ')
		}
	}
	return strings.TrimSpace(b.String())
}

// fold returns the ASCII letter of a Latin letter with a diacritic, or a space.
func fold(r rune) string {
	const from, to = "àáâãäåçèéêëìíîïñòóôõöùúûüýÿÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝ", "aaaaaaceeeeiiiinooooouuuuyyAAAAAACEEEEIIIINOOOOOUUUUY"
	if i := strings.IndexRune(from, r); i >= 0 {
		return string([]rune(to)[len([]rune(from[:i]))])
	}
	return " "
}

// process is the output of one flite run. Read and Close may be called concurrently: Close
// kills the process, which ends a Read in progress.
type process struct {
	ctx    context.Context
	cmd    *exec.Cmd
	out    *bufio.Reader
	stderr *proc.Tail
	left   int64 // data bytes still to read; -1: to the end

	once    sync.Once
	waitErr error
}

// Read reads the samples, up to the WAV's data size. At the end it reaps the process and
// reports its failure, if any.
func (p *process) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, p.end()
	}
	if p.left > 0 && int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n, err := p.out.Read(b)
	if p.left > 0 {
		p.left -= int64(n)
	}
	if err == io.EOF {
		return n, p.end()
	}
	return n, err
}

// end reaps the process after its last sample.
func (p *process) end() error {
	if err := p.wait(); err != nil {
		return err
	}
	return io.EOF
}

// Close kills the process if it still runs and reaps it.
func (p *process) Close() error {
	p.cmd.Process.Kill() // after the process ended this is os.ErrProcessDone, never another process
	p.wait()
	return nil
}

func (p *process) wait() error {
	p.once.Do(func() {
		io.Copy(io.Discard, p.out) // what follows the data, so that the program can exit
		err := p.cmd.Wait()
		switch {
		case p.ctx.Err() != nil:
			p.waitErr = p.ctx.Err()
		case err != nil:
			p.waitErr = fmt.Errorf("flite: flite failed: %w: %s", err, p.stderr.String())
		}
	})
	return p.waitErr
}
