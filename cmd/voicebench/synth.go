package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/convengine/engine/audio"
)

// sampleRate is what the engine takes as audio input.
const sampleRate = 16000

// Voice is a synthesizer voice that reads the utterances.
type Voice struct {
	// Family is the program: "espeak" or "flite". Its voices differ more from each other's
	// than from their own family's, so the report groups by it.
	Family string `json:"family"`
	Name   string `json:"name"`
}

func (v Voice) String() string { return v.Family + ":" + v.Name }

// allVoices are the voices the benchmark asks for: four English variants of espeak-ng and two
// flite voices, which sound nothing like espeak-ng's formant synthesis.
var allVoices = []Voice{
	{"espeak", "en-us"},
	{"espeak", "en-gb"},
	{"espeak", "en-us+f3"},
	{"espeak", "en-029"},
	{"flite", "slt"},
	{"flite", "kal16"},
}

// quickVoices are the -quick subset: one of each family.
var quickVoices = []string{"espeak:en-us", "flite:slt"}

// availableVoices returns the voices whose program is installed and that say a test word,
// and a note for each voice left out. flite is looked up now, not at build time: it may be
// installed while the benchmark is being developed.
func availableVoices(ctx context.Context, want []Voice) ([]Voice, []string) {
	var (
		out   []Voice
		notes []string
	)
	for _, v := range want {
		if _, err := exec.LookPath(program(v)); err != nil {
			notes = append(notes, fmt.Sprintf("%s skipped: %s is not installed (Debian package %s)", v, program(v), program(v)))
			continue
		}
		if _, err := synthesize(ctx, v, "hello"); err != nil {
			notes = append(notes, fmt.Sprintf("%s skipped: %v", v, err))
			continue
		}
		out = append(out, v)
	}
	return out, notes
}

func program(v Voice) string {
	if v.Family == "flite" {
		return "flite"
	}
	return "espeak-ng"
}

// synthesize says text with v and returns 16 kHz samples, as a client would send them.
func synthesize(ctx context.Context, v Voice, text string) ([]int16, error) {
	var wav []byte
	switch v.Family {
	case "espeak":
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, "espeak-ng", "--stdout", "-v", v.Name, text)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("espeak-ng -v %s: %w: %s", v.Name, err, strings.TrimSpace(stderr.String()))
		}
		wav = out
	case "flite":
		// flite writes only to a file; -o /dev/stdout would make it seek on a pipe.
		f, err := os.CreateTemp("", "voicebench-*.wav")
		if err != nil {
			return nil, err
		}
		f.Close()
		defer os.Remove(f.Name())
		out, err := exec.CommandContext(ctx, "flite", "-voice", v.Name, "-t", text, "-o", f.Name()).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("flite -voice %s: %w: %s", v.Name, err, strings.TrimSpace(string(out)))
		}
		if wav, err = os.ReadFile(f.Name()); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown voice family %q", v.Family)
	}
	pcm, rate, err := readWAV(wav)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v, err)
	}
	if len(pcm) == 0 {
		return nil, fmt.Errorf("%s said nothing", v)
	}
	return audio.Resample(pcm, rate, sampleRate), nil
}

// readWAV reads 16-bit mono PCM WAV leniently: espeak-ng writing to a pipe cannot go back to
// fill in the sizes, so its header claims 2 GiB and the data runs to the end of the file.
// (audio.DecodeWAV is strict and takes one rate, as the engine must be.)
func readWAV(b []byte) ([]int16, int, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, 0, errors.New("not a WAV file")
	}
	rate := 0
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:p+8]))
		body := b[p+8:]
		switch id {
		case "fmt ":
			if size < 16 || len(body) < 16 {
				return nil, 0, errors.New("short fmt chunk")
			}
			format, channels := binary.LittleEndian.Uint16(body[0:2]), binary.LittleEndian.Uint16(body[2:4])
			bits := binary.LittleEndian.Uint16(body[14:16])
			if format != 1 || channels != 1 || bits != 16 {
				return nil, 0, fmt.Errorf("format %d, %d channels, %d bits; want 16-bit mono PCM", format, channels, bits)
			}
			rate = int(binary.LittleEndian.Uint32(body[4:8]))
		case "data":
			if rate == 0 {
				return nil, 0, errors.New("data before fmt")
			}
			body = body[:min(size, len(body))&^1]
			return audio.PCMFromBytes(body), rate, nil
		}
		p += 8 + size + size&1
	}
	return nil, 0, errors.New("no data chunk")
}

// cache keeps synthesized speech as WAV files in dir, so that a voice says each utterance
// once per run (or once ever, with -audio-dir) whatever the conditions.
type cache struct{ dir string }

func (c cache) path(v Voice, text string) string {
	sum := sha256.Sum256([]byte(v.String() + "\x00" + text))
	name := strings.NewReplacer(":", "_", "+", "_", "/", "_").Replace(v.String())
	return filepath.Join(c.dir, name+"-"+hex.EncodeToString(sum[:6])+".wav")
}

// speech returns text as v says it, from the cache or newly synthesized.
func (c cache) speech(ctx context.Context, v Voice, text string) ([]int16, error) {
	p := c.path(v, text)
	if b, err := os.ReadFile(p); err == nil {
		if pcm, rate, err := readWAV(b); err == nil && rate == sampleRate {
			return pcm, nil
		}
	}
	pcm, err := synthesize(ctx, v, text)
	if err != nil {
		return nil, err
	}
	// Written aside and renamed, so that a run stopped halfway leaves no truncated file.
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, audio.EncodeWAV(pcm, sampleRate), 0o644); err != nil {
		return nil, err
	}
	return pcm, os.Rename(tmp, p)
}
