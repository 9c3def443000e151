package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Report is the outcome of a run, as -json writes it.
type Report struct {
	Mode      string   `json:"mode"`
	Operation string   `json:"operation"`
	Local     bool     `json:"local"`
	Started   string   `json:"started"`
	Settings  Settings `json:"settings"`
	Machine   Machine  `json:"machine"`
	Runs      []Run    `json:"runs"`
	// Ratio is the engine's throughput divided by the bare handler's, in a -local turn run.
	Ratio float64 `json:"throughput_ratio,omitempty"`
	// Ledger compares the actions executed with the bank's ledger, when the bank is known.
	Ledger *LedgerCheck `json:"ledger,omitempty"`
	// Soak is what -soak found.
	Soak *Soak `json:"soak,omitempty"`
}

// Settings are the load and, with -local, the bench model's pace.
type Settings struct {
	Target      string `json:"target,omitempty"`
	Concurrency int    `json:"concurrency"`
	// Phases are the operations run at once, as -mode named them, when there are several.
	Phases     []string       `json:"phases,omitempty"`
	N          int            `json:"n,omitempty"`
	Duration   string         `json:"duration,omitempty"`
	Rate       float64        `json:"rate,omitempty"`
	Warmup     int            `json:"warmup"`
	Rounds     int            `json:"rounds"`
	Session    bool           `json:"session"`
	Bound      bool           `json:"bound"`
	Raw        bool           `json:"raw"`
	Transcript string         `json:"transcript"`
	Model      *ModelSettings `json:"model,omitempty"`
	// Speech are the settings of the voice and idle modes.
	Speech *SpeechSettings `json:"speech,omitempty"`
}

// ModelSettings describe the bench model and backend of a -local run.
type ModelSettings struct {
	FirstToken     string `json:"first_token_delay"`
	TokenInterval  string `json:"token_interval"`
	Deltas         int    `json:"deltas"`
	Widgets        int    `json:"widgets"`
	ToolCalls      int    `json:"tool_calls"`
	BackendLatency string `json:"backend_latency"`
}

// Machine is where the run took place.
type Machine struct {
	CPUs        int     `json:"cpus"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	CPUModel    string  `json:"cpu_model,omitempty"`
	Go          string  `json:"go"`
	OS          string  `json:"os"`
	LoadAverage float64 `json:"load_average_1m"`
}

// Run is what one target did.
type Run struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Mode and Operation say what one operation is, when the run's phases differ.
	Mode      string `json:"mode,omitempty"`
	Operation string `json:"operation,omitempty"`
	// OK and Failed count the measured operations.
	OK     int64        `json:"ok"`
	Failed int64        `json:"failed"`
	Errors []ErrorCount `json:"errors"`
	// LateStarts counts operations of an open-loop run that found every worker busy.
	LateStarts int64   `json:"late_starts"`
	Seconds    float64 `json:"seconds"`
	// Throughput is successful operations per second.
	Throughput float64 `json:"throughput_per_s"`
	// First is the time to the first speak event (turn) or audio byte (tts).
	First *Summary `json:"first,omitempty"`
	// Added is First minus the model's configured first-token delay: the time the server and
	// the transport add.
	Added *Summary `json:"added_first,omitempty"`
	// Done is the time to the done event, or to the end of the answer.
	Done   Summary     `json:"done"`
	Server *ServerCost `json:"server,omitempty"`
	// Sockets is what the sockets of an idle run cost the server.
	Sockets *SocketCost `json:"sockets,omitempty"`
	// ClientCPUPerOp is the load tool's own CPU time per operation, in microseconds.
	ClientCPUPerOp float64 `json:"client_cpu_per_op_us"`
}

// ServerCost is what the server's process spent, when it runs on this machine.
type ServerCost struct {
	PID        int     `json:"pid"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// CPUPerOp is in microseconds: user and system time over every measured operation.
	CPUPerOp         float64 `json:"cpu_per_op_us"`
	AllocsPerOp      float64 `json:"allocs_per_op,omitempty"`
	BytesPerOp       float64 `json:"bytes_per_op,omitempty"`
	HeapBefore       uint64  `json:"heap_live_before_bytes,omitempty"`
	HeapAfter        uint64  `json:"heap_live_after_bytes,omitempty"`
	GoroutinesBefore uint64  `json:"goroutines_before,omitempty"`
	GoroutinesAfter  uint64  `json:"goroutines_after,omitempty"`
	MemoryAfter      uint64  `json:"memory_after_bytes,omitempty"`
	// FirstSpeak is the server's own share of the time to first speak: from its handler
	// starting to the first speak event flushed (-local turn runs; with rounds, the worst
	// round's figures).
	FirstSpeak *Summary `json:"first_speak,omitempty"`
	// FirstAudio is the engine's share of a voice turn's time to first audio: from its
	// end_of_speech read to its first audio written, less the configured time of the bench
	// transcriber, model (to its first sentence) and synthesizer (-local voice runs).
	FirstAudio *Summary `json:"first_audio,omitempty"`
}

func writeJSON(file string, rep *Report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// printReport writes the report for people.
func printReport(w io.Writer, rep *Report) {
	s := rep.Settings
	load := fmt.Sprintf("%d workers", s.Concurrency)
	if len(s.Phases) > 0 {
		load = strings.Join(s.Phases, ", ") + " at once"
	} else if s.Rate > 0 {
		load += fmt.Sprintf(", %.0f/s open loop", s.Rate)
	}
	if s.N > 0 {
		load += fmt.Sprintf(", %d operations", s.N)
	} else {
		load += ", " + s.Duration
	}
	if s.Rounds > 1 {
		load += fmt.Sprintf(" per target, %d rounds", s.Rounds)
	}
	fmt.Fprintf(w, "\n%s: %s\n", rep.Mode, rep.Operation)
	fmt.Fprintf(w, "load: %s", load)
	if s.Bound {
		fmt.Fprint(w, ", DPoP-bound sessions")
	} else if s.Session {
		fmt.Fprint(w, ", sessions")
	}
	if s.Raw {
		fmt.Fprint(w, ", raw HTTP")
	}
	fmt.Fprintln(w)
	if m := s.Model; m != nil {
		fmt.Fprintf(w, "bench model: first token %s, %d deltas %s apart, %d widgets, %d tool calls (backend %s)\n",
			m.FirstToken, m.Deltas, m.TokenInterval, m.Widgets, m.ToolCalls, m.BackendLatency)
	}
	printSpeech(w, s.Speech)
	mc := rep.Machine
	fmt.Fprintf(w, "machine: %d CPUs (%s), %s, %s, load average %.2f at the end\n", mc.CPUs, mc.CPUModel, mc.Go, mc.OS, mc.LoadAverage)
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "\n%s (%s)\n", r.Name, r.URL)
		if r.Operation != "" {
			fmt.Fprintf(w, "  %s\n", r.Operation)
		}
		fmt.Fprintf(w, "  %d ok, %d failed in %.2fs: %.1f/s", r.OK, r.Failed, r.Seconds, r.Throughput)
		if r.LateStarts > 0 {
			fmt.Fprintf(w, ", %d late starts", r.LateStarts)
		}
		fmt.Fprintln(w)
		if len(r.Errors) > 0 {
			var parts []string
			for _, e := range r.Errors {
				parts = append(parts, fmt.Sprintf("%s %d", e.Code, e.Count))
			}
			fmt.Fprintf(w, "  errors: %s\n", strings.Join(parts, ", "))
		}
		fmt.Fprintf(w, "  %-12s %9s %9s %9s %9s %9s\n", "ms", "p50", "p90", "p99", "p99.9", "max")
		line := func(label string, s *Summary) {
			if s == nil || s.Count == 0 {
				return
			}
			fmt.Fprintf(w, "  %-12s %9.3f %9.3f %9.3f %9.3f %9.3f\n", label, s.P50, s.P90, s.P99, s.P999, s.Max)
		}
		first := "first speak"
		if mode := cmp.Or(r.Mode, rep.Mode); mode == "tts" || mode == "voice" {
			first = "first audio"
		}
		line(first, r.First)
		line("added", r.Added)
		line("done", &r.Done)
		if r.Server != nil {
			line("server first", r.Server.FirstSpeak)
			line("engine share", r.Server.FirstAudio)
		}
		if sc := r.Server; sc != nil {
			fmt.Fprintf(w, "  server: %.1f µs CPU per operation (%.2f s)", sc.CPUPerOp, sc.CPUSeconds)
			if sc.AllocsPerOp > 0 {
				fmt.Fprintf(w, ", %.1f allocations (%.0f B) per operation", sc.AllocsPerOp, sc.BytesPerOp)
			}
			fmt.Fprintln(w)
			if sc.HeapBefore > 0 {
				fmt.Fprintf(w, "  server heap: %s live before, %s after; %d goroutines before, %d after; %s in total\n",
					bytesString(sc.HeapBefore), bytesString(sc.HeapAfter), sc.GoroutinesBefore, sc.GoroutinesAfter, bytesString(sc.MemoryAfter))
			}
		}
		printSockets(w, r.Sockets)
		fmt.Fprintf(w, "  load tool: %.1f µs CPU per operation\n", r.ClientCPUPerOp)
	}
	if l := rep.Ledger; l != nil {
		fmt.Fprintf(w, "\nledger (%s): %d actions: %d executed, %d declined, %d unanswered; the bank holds %d transfers: %d missing, %d duplicated, %d unasked\n",
			l.Bank, l.Actions, l.Executed, l.Declined, l.Unknown, l.Transfers, l.Missing, l.Duplicated, l.Unasked)
	}
	if rep.Ratio > 0 {
		fmt.Fprintf(w, "\nengine throughput / bare handler throughput: %.3f\n", rep.Ratio)
	}
}

func bytesString(b uint64) string {
	switch {
	case b >= 10<<20:
		return fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%.0f KB", float64(b)/(1<<10))
	}
}
