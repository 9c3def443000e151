// Command voicebench measures speech recognition as a user meets it: utterances said by
// synthesizer voices, under silence and noise, each posted to POST /engine as a voice turn,
// and the render spec that comes back scored against what was meant.
//
// By default it serves the demo tenant in process, listening with pocketsphinx as
// cmd/engine does; -url targets a running engine serving the demo tenant instead (such as
// go run ./cmd/engine). It prints a markdown report and, with -json, writes every turn.
//
//	go run ./cmd/voicebench -quick
//	go run ./cmd/voicebench -json /tmp/voicebench.json > /tmp/voicebench.md
//	go run ./cmd/voicebench -url http://127.0.0.1:8080 -voices espeak -conditions clean,snr10
//	go run ./cmd/voicebench -from /tmp/voicebench.json   # the report of a saved run again
//
// It needs espeak-ng, and pocketsphinx with pocketsphinx-en-us for the in-process engine;
// flite voices are used when the flite program is installed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convengine/engine/examples/demobank"
)

type options struct {
	url, key, token, jsonPath, audioDir, label, from string
	voices, conditions                               string
	quick, verbose                                   bool
	parallel, confusions                             int
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "", "base URL of a running engine serving the demo tenant; empty serves one in process")
	flag.StringVar(&o.key, "key", demobank.EngineKey, "engine key of the demo tenant")
	flag.StringVar(&o.token, "token", "demo-user", "the user's token (X-Token)")
	flag.StringVar(&o.jsonPath, "json", "", "write the report and every turn as JSON to this file")
	flag.StringVar(&o.audioDir, "audio-dir", "", "keep synthesized speech here and reuse it across runs; empty: a temporary directory for this run")
	flag.StringVar(&o.label, "label", "", "a line to head the report with, such as what the engine was built from")
	flag.StringVar(&o.voices, "voices", "", "comma-separated voices or families to use, such as espeak:en-us,flite (default all)")
	flag.StringVar(&o.conditions, "conditions", "", "comma-separated conditions: clean, pad1s, snr20, snr10, pink10 (default all but pink10)")
	flag.BoolVar(&o.quick, "quick", false, "a quick check: about 20 utterances, 2 voices, clean, pad1s and snr10")
	flag.BoolVar(&o.verbose, "v", false, "print every turn to stderr")
	flag.IntVar(&o.parallel, "parallel", runtime.NumCPU(), "turns in flight at once")
	flag.IntVar(&o.confusions, "confusions", 25, "false actions and other confusions to list")
	flag.StringVar(&o.from, "from", "", "print the markdown report of a run saved with -json, instead of running")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "voicebench: unexpected arguments:", strings.Join(flag.Args(), " "))
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "voicebench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.from != "" {
		return render(o.from, o.confusions, o.jsonPath)
	}
	lines, err := demoLines()
	if err != nil {
		return err
	}
	conds, err := pickConditions(o.conditions, o.quick)
	if err != nil {
		return err
	}
	wanted, err := pickVoices(o.voices, o.quick)
	if err != nil {
		return err
	}
	voices, notes := availableVoices(ctx, wanted)
	for _, n := range notes {
		fmt.Fprintln(os.Stderr, "voicebench:", n)
	}
	if len(voices) == 0 {
		return errors.New("no voice to speak with: install espeak-ng (and flite)")
	}
	utts := selectUtterances(o.quick)
	o.parallel = max(o.parallel, 1)

	r := &Report{Label: o.label, Started: time.Now(), Parallel: o.parallel, Quick: o.quick, Voices: voices,
		Notes: notes, Conditions: conds, Utterances: utts, Revision: revision()}

	dir := o.audioDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "voicebench-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	speech, err := synthesizeAll(ctx, cache{dir}, voices, utts, o.parallel)
	if err != nil {
		return err
	}
	r.SynthSecs = time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "voicebench: %d recordings synthesized in %s\n", len(speech), round(r.SynthSecs))

	base := strings.TrimSuffix(o.url, "/")
	r.Engine = base
	if base == "" {
		d, err := startDemo()
		if err != nil {
			return fmt.Errorf("serving the demo: %w", err)
		}
		defer d.Close()
		base = d.URL
		r.Engine = "in-process demo (cmd/engine's pieces, pocketsphinx with the intent grammar, Confirm: intent.NumberWords and Unconfirmed: intent.WithoutAmounts)"
	}
	c := &client{base: base, key: o.key, token: o.token,
		http: &http.Client{Timeout: 3 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: o.parallel}}}

	// One turn before the clock starts: the first compiles the tenant's grammar.
	if _, err := c.turn(ctx, speech[key(voices[0], utts[0].Text)]); err != nil {
		return fmt.Errorf("first turn: %w", err)
	}

	cellSecs := map[string]float64{}
	start = time.Now()
	// A cell (condition, voice) at a time, its utterances in parallel, so that each cell's
	// throughput is its own.
	for _, cond := range conds {
		for _, v := range voices {
			t0 := time.Now()
			turns := runCell(ctx, c, lines, cond, v, utts, speech, o.parallel)
			if err := ctx.Err(); err != nil {
				return err
			}
			cellSecs[cond.Name+"/"+v.String()] = time.Since(t0).Seconds()
			ok := 0
			for _, t := range turns {
				ok += b2i(t.IntentOK)
				if o.verbose {
					fmt.Fprintf(os.Stderr, "  %-8s %-16s %-13s %-5v %q → %q (%s) %s\n", cond.Name, v, t.Expected, t.IntentOK,
						t.Utterance, t.Transcript, t.Got, t.Error)
				}
			}
			fmt.Fprintf(os.Stderr, "voicebench: %-7s %-16s %d/%d right in %s\n", cond.Name, v, ok, len(turns), round(time.Since(t0).Seconds()))
			r.Turns = append(r.Turns, turns...)
		}
	}
	r.Seconds = time.Since(start).Seconds()
	r.summarize(cellSecs, o.confusions)
	r.markdown(os.Stdout)
	return writeJSON(o.jsonPath, r)
}

// render prints the report of a saved run, its tables made anew from its turns, and writes it
// again to jsonPath when that is set.
func render(path string, confusions int, jsonPath string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	r.summarize(r.cellSeconds(), confusions)
	r.markdown(os.Stdout)
	return writeJSON(jsonPath, &r)
}

// writeJSON writes r to path, unless path is empty.
func writeJSON(path string, r *Report) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func key(v Voice, text string) string { return v.String() + "\x00" + text }

// synthesizeAll says every utterance with every voice before any turn, so that the turns'
// timing is the engine's alone.
func synthesizeAll(ctx context.Context, c cache, voices []Voice, utts []Utterance, parallel int) (map[string][]int16, error) {
	out := map[string][]int16{}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, parallel)
	for _, v := range voices {
		for _, u := range utts {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				pcm, err := c.speech(ctx, v, u.Text)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, fmt.Errorf("%s saying %q: %w", v, u.Text, err))
					return
				}
				out[key(v, u.Text)] = pcm
			}()
		}
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// runCell posts every utterance as v says it under cond, parallel at a time, and scores the
// answers in the utterances' order.
func runCell(ctx context.Context, c *client, lines answerLines, cond Condition, v Voice, utts []Utterance,
	speech map[string][]int16, parallel int) []Turn {
	turns := make([]Turn, len(utts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i, u := range utts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			pcm := cond.apply(speech[key(v, u.Text)], v.String()+"\x00"+u.Text)
			t0 := time.Now()
			a, err := c.turn(ctx, pcm)
			t := Turn{Utterance: u.Text, Kind: u.Kind, Expected: u.Intent, Cents: u.Cents, To: u.To, Voice: v.String(),
				Family: v.Family, Condition: cond.Name, Millis: float64(time.Since(t0).Microseconds()) / 1000}
			if err != nil {
				t.Error, t.Got = err.Error(), "error"
			} else {
				t.Score = lines.score(u, a)
			}
			turns[i] = t
		}()
	}
	wg.Wait()
	return turns
}

// pickConditions returns the conditions -conditions names, in the table's order.
func pickConditions(names string, quick bool) ([]Condition, error) {
	var out []Condition
	if names == "" {
		for _, c := range allConditions {
			if (quick && c.Quick) || (!quick && c.Default) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	want := strings.Split(names, ",")
	for _, c := range allConditions {
		if i := slices.Index(want, c.Name); i >= 0 {
			out = append(out, c)
			want = slices.Delete(want, i, i+1)
		}
	}
	if len(want) > 0 {
		return nil, fmt.Errorf("-conditions: unknown %s", strings.Join(want, ", "))
	}
	return out, nil
}

// pickVoices returns the voices -voices names, by family:name, name or family.
func pickVoices(names string, quick bool) ([]Voice, error) {
	var want []string
	switch {
	case names != "":
		want = strings.Split(names, ",")
	case quick:
		want = quickVoices
	default:
		return allVoices, nil
	}
	var out []Voice
	used := make([]bool, len(want))
	for _, v := range allVoices {
		for i, w := range want {
			if w == v.String() || w == v.Name || w == v.Family {
				out, used[i] = append(out, v), true
				break
			}
		}
	}
	// A voice not in the table is used as asked: family:name.
	for i, w := range want {
		if used[i] {
			continue
		}
		fam, name, ok := strings.Cut(w, ":")
		if !ok || (fam != "espeak" && fam != "flite") {
			return nil, fmt.Errorf("-voices: %q is not espeak:NAME, flite:NAME, a family or a listed voice", w)
		}
		out = append(out, Voice{fam, name})
	}
	return out, nil
}

// revision names the commit voicebench was built from, as the go command stamped it, or as git
// says when go run did not stamp it; "+dirty" marks uncommitted changes.
func revision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out)) + " (git describe in the working directory)"
}
