package sphinx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/audio/vad"
)

// ErrNotInstalled is returned by [New] when the pocketsphinx_continuous program cannot be found.
var ErrNotInstalled = errors.New("sphinx: pocketsphinx is not installed (Debian package pocketsphinx)")

// ErrNoModel is wrapped by the errors for a locale without a model, and by [New] when there is
// no model at all.
var ErrNoModel = errors.New("sphinx: no pocketsphinx model for the locale (Debian package pocketsphinx-en-us has en-US)")

// Default places of the program and the models, as Debian installs them.
const (
	DefaultProgram  = "pocketsphinx_continuous"
	DefaultModelDir = "/usr/share/pocketsphinx/model"
)

// Options configure a [Transcriber]. The zero value, or nil, is the defaults.
type Options struct {
	// Program is the pocketsphinx_continuous program; default [DefaultProgram], looked up on
	// PATH.
	Program string
	// ModelDir holds a directory of models per locale; default [DefaultModelDir].
	ModelDir string
	// Grammar returns the JSGF grammar to hear a tenant's users with, or "" for free-form
	// recognition. known reports whether the model's dictionary has a word (in lower case);
	// a grammar must use no other. It is called once per tenant and model and its result kept
	// for as long as the tenant is reachable. Nil means free-form recognition for everyone.
	Grammar func(t *engine.Tenant, known func(word string) bool) (string, error)
	// MaxProcesses bounds the recognitions that run at once; others wait their turn. Default:
	// the number of CPUs.
	MaxProcesses int
	// Confirm names the words of a grammar result that a second, free-form pass over the same
	// audio (the general language model) must also hear, such as an amount's number words;
	// when it does not hear them all, the result is refused with an error wrapping
	// [engine.ErrNotUnderstood]. A grammar makes the recogniser hear one of its phrases in any
	// speech ("tell me my balance" as "pay taylor eleven"): this check keeps such a phrase
	// from becoming an action. It runs only when Confirm names words, since the free-form pass
	// costs about four times the grammar's. Nil: no check.
	Confirm func(transcript string) []string
	// Unconfirmed returns what to hear instead of a grammar result whose Confirm words the
	// free-form pass did not hear, such as the request without its amount
	// (intent.WithoutAmounts: "send twenty dollars to alex" becomes "send money to alex"), so
	// that the user is asked again for what was not heard rather than told nothing was. ""
	// refuses the result, as does a nil Unconfirmed.
	Unconfirmed func(transcript string) string
	// Flags are more arguments for the program, such as []string{"-remove_noise", "no"} for
	// audio known to be free of noise. They come from the operator, never from a request.
	Flags []string
}

// Transcriber is an [engine.Transcriber] over pocketsphinx. It is safe for concurrent use.
type Transcriber struct {
	program     string
	models      []*model
	grammar     func(*engine.Tenant, func(string) bool) (string, error)
	confirm     func(string) []string
	unconfirmed func(string) string
	flags       []string
	slots       chan struct{}
	cache       sync.Map // grammarKey → *grammarEntry
}

var (
	_ engine.Transcriber       = (*Transcriber)(nil)
	_ engine.TenantTranscriber = (*Transcriber)(nil)
)

// New returns a Transcriber over the models found in opts.ModelDir. It returns an error
// wrapping [ErrNotInstalled] when the program is missing, and [ErrNoModel] when no directory
// holds a model. opts may be nil.
func New(opts *Options) (*Transcriber, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Program == "" {
		o.Program = DefaultProgram
	}
	if o.ModelDir == "" {
		o.ModelDir = DefaultModelDir
	}
	if o.MaxProcesses <= 0 {
		o.MaxProcesses = runtime.NumCPU()
	}
	path, err := exec.LookPath(o.Program)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotInstalled, err)
	}
	models, err := findModels(o.ModelDir)
	if err != nil {
		return nil, err
	}
	return &Transcriber{program: path, models: models, grammar: o.Grammar, confirm: o.Confirm, unconfirmed: o.Unconfirmed, flags: slices.Clone(o.Flags),
		slots: make(chan struct{}, o.MaxProcesses)}, nil
}

// Locales returns the locales the Transcriber has models for, such as "en-us".
func (s *Transcriber) Locales() []string {
	var out []string
	for _, m := range s.models {
		out = append(out, m.name)
	}
	return out
}

// Transcribe recognises free-form speech in pcm, 16-bit mono samples at rate, with the
// general language model of locale. Audio at another rate than the model's 16 kHz is
// resampled. Silence gives "".
func (s *Transcriber) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	return s.TranscribeFor(ctx, nil, pcm, rate, locale)
}

// TranscribeFor recognises pcm as [Transcriber.Transcribe] does, but with the grammar of
// tenant t's phrases when [Options].Grammar gives one.
func (s *Transcriber) TranscribeFor(ctx context.Context, t *engine.Tenant, pcm []int16, rate int, locale string) (string, error) {
	m, err := s.model(locale)
	if err != nil {
		return "", err
	}
	if rate <= 0 {
		return "", fmt.Errorf("sphinx: sample rate %d", rate)
	}
	var g *grammarEntry
	if s.grammar != nil && t != nil {
		if g, err = s.grammarOf(t, m); err != nil {
			return "", err
		}
	}
	// The program's own voice activity detection is off (see run): the speech is found here,
	// and audio without any is silence, whatever a grammar would make of it.
	pcm = vad.Trim(audio.Resample(pcm, rate, modelRate), nil)
	if len(pcm) == 0 {
		return "", nil
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	text, err := s.run(ctx, m, pcm, g)
	if err != nil || g == nil || s.confirm == nil {
		return text, err
	}
	want := s.confirm(text)
	if len(want) == 0 {
		return text, nil
	}
	free, err := s.run(ctx, m, pcm, nil)
	if err != nil {
		return "", err
	}
	heard := strings.Fields(free)
	for _, w := range want {
		if slices.Contains(heard, w) {
			continue
		}
		if s.unconfirmed != nil {
			if rest := s.unconfirmed(text); rest != "" {
				return rest, nil
			}
		}
		return "", fmt.Errorf("%w: the grammar heard %q, a free-form pass %q", engine.ErrNotUnderstood, text, free)
	}
	return text, nil
}

// modelRate is the sample rate of pocketsphinx's acoustic models.
const modelRate = 16000

// Silence around the speech: pocketsphinx's voice activity detection needs some before speech
// starts and some after it ends, or it drops the first or the last word.
const (
	leadingSilence  = modelRate * 3 / 10
	trailingSilence = modelRate / 2
)

// maxOutput bounds what is read of the program's output.
const maxOutput = 64 << 10

// run runs the program once over pcm, with grammar g and its dictionary, or free-form with
// the model's language model and whole dictionary when g is nil.
func (s *Transcriber) run(ctx context.Context, m *model, pcm []int16, g *grammarEntry) (string, error) {
	input := make([]byte, 0, 2*(leadingSilence+len(pcm)+trailingSilence))
	input = append(input, make([]byte, 2*leadingSilence)...)
	input = audio.AppendPCM(input, pcm)
	input = append(input, make([]byte, 2*trailingSilence)...)

	// Dither adds noise of one bit to the samples, so that digital silence (the padding, the
	// pauses of synthesized or gated audio) does not upset the noise estimate; its fixed seed
	// keeps results repeatable.
	//
	// The program's own voice activity detection is off: it refused phrases with a second of
	// silence around them and flipped with 50 ms more or less.
	args := []string{"-infile", "/dev/stdin", "-samprate", "16000", "-hmm", m.acoustic,
		"-dither", "yes", "-seed", "1", "-remove_silence", "no"}
	if g != nil {
		// Wider beams than the defaults keep a grammar's right phrase in the search through
		// noise, for a few milliseconds; with the general language model they cost seconds.
		args = append(args, "-beam", "1e-80", "-pbeam", "1e-80", "-wbeam", "1e-60")
	}
	cmd := exec.CommandContext(ctx, s.program, append(args, s.flags...)...)
	if g != nil {
		// The grammar and its dictionary are files of this run only (runFile).
		grammar, err := newRunFile("sphinx-grammar", []byte(g.text))
		if err != nil {
			return "", err
		}
		defer grammar.close()
		dict, err := newRunFile("sphinx-dictionary", g.dict)
		if err != nil {
			return "", err
		}
		defer dict.close()
		cmd.Args = append(cmd.Args, "-jsgf", grammar.pass(cmd), "-dict", dict.pass(cmd))
	} else {
		cmd.Args = append(cmd.Args, "-lm", m.lm, "-dict", m.dict)
	}
	cmd.Stdin = bytes.NewReader(input)
	var stdout limitedBuffer
	stdout.max = maxOutput
	stderr := &errorLines{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("sphinx: starting %s: %w", filepath.Base(s.program), err)
	}
	err := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", fmt.Errorf("sphinx: %s failed: %w: %s", filepath.Base(s.program), err, stderr.String())
	}
	return strings.Join(strings.Fields(stdout.String()), " "), nil
}

// grammarKey identifies the grammar of one tenant for one model.
type grammarKey struct {
	tenant weak.Pointer[engine.Tenant]
	model  *model
}

type grammarEntry struct {
	once sync.Once
	text string // the JSGF grammar
	dict []byte // the lines of the model's dictionary for the grammar's words
	err  error
}

// grammarOf returns the grammar of t for m, writing it on first use. Entries go when the
// tenant is collected, so that a store that reloads its tenants does not grow the cache.
func (s *Transcriber) grammarOf(t *engine.Tenant, m *model) (*grammarEntry, error) {
	key := grammarKey{tenant: weak.Make(t), model: m}
	v, ok := s.cache.Load(key)
	if !ok {
		var loaded bool
		v, loaded = s.cache.LoadOrStore(key, &grammarEntry{})
		if !loaded {
			runtime.AddCleanup(t, func(k grammarKey) { s.cache.Delete(k) }, key)
		}
	}
	e := v.(*grammarEntry)
	e.once.Do(func() {
		words, err := m.words()
		if err != nil {
			e.err = err
			return
		}
		e.text, e.err = s.grammar(t, func(w string) bool {
			_, found := slices.BinarySearch(words, w)
			return found
		})
		if e.err != nil {
			e.err = fmt.Errorf("sphinx: the grammar of tenant %q: %w", t.Key, e.err)
			return
		}
		e.dict, e.err = m.pronunciations(grammarWords(e.text))
	})
	if e.err != nil || e.text == "" {
		return nil, e.err // an empty grammar: free-form
	}
	return e, nil
}

// limitedBuffer keeps the first max bytes written to it and drops the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// errorLines keeps the first few ERROR and FATAL lines of pocketsphinx's log, which is
// otherwise long.
type errorLines struct {
	partial []byte
	lines   []string
}

func (e *errorLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(e.partial) < 512 {
				e.partial = append(e.partial, p[:min(len(p), 512-len(e.partial))]...)
			}
			break
		}
		line := string(append(e.partial, p[:i]...))
		e.partial = e.partial[:0]
		p = p[i+1:]
		if len(e.lines) < 4 && (strings.HasPrefix(line, "ERROR") || strings.HasPrefix(line, "FATAL")) {
			e.lines = append(e.lines, line)
		}
	}
	return n, nil
}

func (e *errorLines) String() string { return strings.Join(e.lines, "; ") }
