package espeak

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/convengine/engine"
)

// voice is one line of espeak-ng --voices.
type voice struct {
	lang     string // "en-us"
	name     string // "English_(America)"
	file     string // "gmw/en-US"
	priority int
	others   []otherLanguage // languages the voice also speaks: "(en 3)"
}

type otherLanguage struct {
	lang     string
	priority int
}

// voiceList is what espeak-ng lists: its voices and their variants.
type voiceList struct {
	voices   []voice
	variants map[string]string // lower-case variant name or file → its file name ("f3", "Annie")
}

// maxVoiceLen bounds a voice name; espeak-ng's are far shorter.
const maxVoiceLen = 100

// resolve returns the -v argument for a voice a client named, or an error wrapping
// engine.ErrUnknownVoice.
func (s *Synthesizer) resolve(ctx context.Context, name string) (string, error) {
	unknown := func() (string, error) {
		return "", fmt.Errorf("%w: espeak-ng has no voice %q", engine.ErrUnknownVoice, truncate(name, maxVoiceLen))
	}
	if len(name) > maxVoiceLen {
		return unknown()
	}
	list, err := s.list(ctx)
	if err != nil {
		return "", err
	}
	base, variant, hasVariant := strings.Cut(name, "+")
	var arg string
	for _, v := range list.voices {
		if strings.EqualFold(base, v.lang) || strings.EqualFold(base, v.name) || strings.EqualFold(base, v.file) {
			arg = v.file
			break
		}
	}
	if arg == "" {
		return unknown()
	}
	if hasVariant {
		file, ok := list.variants[strings.ToLower(variant)]
		if !ok {
			return unknown()
		}
		arg += "+" + file
	}
	return arg, nil
}

// VoiceFor returns espeak-ng's preferred voice for a BCP 47 locale: the voice of that language
// and region, else the one espeak-ng ranks first for it or for its language, else the first of
// another region of the language. It returns "" (espeak-ng's default voice) when no voice fits
// or the voices cannot be listed.
func (s *Synthesizer) VoiceFor(locale string) string {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	list, err := s.list(ctx)
	if err != nil {
		return ""
	}
	for _, tag := range engine.LocaleFallbacks(strings.ToLower(locale)) {
		best, bestPriority := "", 0
		for _, v := range list.voices {
			if v.lang == tag {
				return v.lang
			}
			for _, o := range v.others {
				if o.lang == tag && (best == "" || o.priority < bestPriority) {
					best, bestPriority = v.lang, o.priority
				}
			}
		}
		if best != "" {
			return best
		}
	}
	lang, _, _ := strings.Cut(strings.ToLower(locale), "-")
	best, bestPriority := "", 0
	for _, v := range list.voices {
		if strings.HasPrefix(v.lang, lang+"-") && (best == "" || v.priority < bestPriority) {
			best, bestPriority = v.lang, v.priority
		}
	}
	return best
}

// listTimeout bounds one run of espeak-ng --voices.
const listTimeout = 10 * time.Second

// list returns espeak-ng's voices, listing them on first use. A failed listing is tried again
// on the next call.
func (s *Synthesizer) list(ctx context.Context) (*voiceList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.voices != nil {
		return s.voices, nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	voices, err := s.run(ctx, "--voices")
	if err != nil {
		return nil, err
	}
	variants, err := s.run(ctx, "--voices=variant")
	if err != nil {
		return nil, err
	}
	list := &voiceList{voices: parseVoices(voices), variants: map[string]string{}}
	for _, v := range parseVoices(variants) {
		file := v.file[strings.LastIndexByte(v.file, '/')+1:]
		list.variants[strings.ToLower(file)] = file
		list.variants[strings.ToLower(v.name)] = file
	}
	if len(list.voices) == 0 {
		return nil, fmt.Errorf("espeak: espeak-ng lists no voices")
	}
	s.voices = list
	return list, nil
}

func (s *Synthesizer) run(ctx context.Context, arg string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.program, arg)
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("espeak: listing voices: %w", err)
	}
	return out, nil
}

// parseVoices reads the table of espeak-ng --voices:
//
//	Pty Language       Age/Gender VoiceName          File                 Other Languages
//	 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)
func parseVoices(out []byte) []voice {
	var voices []voice
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		pty, err := strconv.Atoi(f[0])
		if err != nil {
			continue // the heading
		}
		v := voice{priority: pty, lang: strings.ToLower(f[1]), name: f[3], file: f[4]}
		rest := strings.Join(f[5:], " ")
		for _, o := range strings.Split(rest, "(")[1:] {
			lang, p, ok := strings.Cut(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(o), ")")), " ")
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if ok && err == nil {
				v.others = append(v.others, otherLanguage{lang: strings.ToLower(lang), priority: n})
			}
		}
		voices = append(voices, v)
	}
	return voices
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
