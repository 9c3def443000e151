package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/fallback"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/internal/debugstats"
	"github.com/convengine/engine/usage"
	"github.com/convengine/engine/voice"
)

// The servers a -serve child can be.
const (
	serveEngine   = "engine"   // an engine with the bench tenant and model
	serveBare     = "bare"     // the bare SSE handler
	serveBackend  = "backend"  // the bench tenant's backend
	serveDemo     = "demo"     // an engine with the demo tenant and the intent model
	serveDemobank = "demobank" // the demo tenant's backend
)

// benchKey is the engine key of the bench tenant.
const benchKey = "pk_bench"

// debugStats is what a -serve child answers at GET /debug/stats: the runtime figures of its
// process, as the reference server's -debug-addr serves them, and the times it measured. With
// ?gc=1 it collects garbage first, so that the live heap is current.
type debugStats struct {
	// FirstSpeak is the time from a turn's handler starting to its first speak event flushed,
	// for the turns since the last ?reset=1: the server's own share of the time to first speak,
	// without the network, the client or the server's reading of the request.
	FirstSpeak Summary `json:"first_speak"`
	// FirstAudio is the engine's share of a voice turn's time to first audio: from the
	// client's end_of_speech (or text) read to the turn's first audio message written, less
	// the configured time of the bench transcriber, model and synthesizer (see voiceTimer).
	FirstAudio Summary `json:"first_audio"`
	// Sockets is the number of open voice sockets.
	Sockets int64 `json:"sockets"`
	debugstats.Stats
}

func readStats(gc bool) debugStats { return debugStats{Stats: debugstats.Read(gc)} }

// debugHandler serves /debug/stats and the pprof profiles under /debug/pprof/.
func debugHandler(ft *firstSpeakTimer, vt *voiceTimer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/stats", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s := readStats(q.Get("gc") == "1")
		s.FirstSpeak = ft.summary(q.Get("reset") == "1")
		s.FirstAudio = vt.summary(q.Get("reset") == "1")
		s.Sockets = vt.open.Load()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s)
	})
	debugstats.Profiles(mux)
	return mux
}

// serve runs a -serve child: the server of kind on a loopback port, whose URL it prints as
// its first line of output. It serves until its standard input ends (the parent went away or
// closed it) or ctx is cancelled.
func serve(ctx context.Context, cfg *config, stdin io.Reader, stdout, stderr io.Writer) error {
	vt := newVoiceTimer(nil, cfg)
	h, closeServer, err := serverOf(cfg, vt)
	if err != nil {
		return err
	}
	defer closeServer()
	ft := &firstSpeakTimer{next: h, sharedHistogram: newSharedHistogram()}
	vt.next = ft
	mux := http.NewServeMux()
	mux.Handle("/debug/", debugHandler(ft, vt))
	mux.Handle("/", vt)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(slog.NewTextHandler(stderr, nil), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "http://%s\n", ln.Addr())

	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, bufio.NewReader(stdin))
		close(gone)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-gone:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// bareSession answers create-session with a canned session, so that runs with sessions can
// drive the bare handler too; the tokens and proofs of later requests are not looked at.
func bareSession(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, `{"session_id":"00000000-0000-4000-8000-000000000002","created_at":"2026-01-01T00:00:00Z",`+
		`"session_token":"bare","expires_at":"2099-01-01T00:00:00Z","theme":{}}`)
}

// firstSpeakTimer times, in the server, each turn from its handler starting to its first
// speak event flushed.
type firstSpeakTimer struct {
	next http.Handler
	*sharedHistogram
}

func (f *firstSpeakTimer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != engine.PathTurn {
		f.next.ServeHTTP(w, r)
		return
	}
	tw := &timingWriter{ResponseWriter: w, start: time.Now()}
	f.next.ServeHTTP(tw, r)
	if tw.first > 0 {
		f.record(tw.first)
	}
}

// timingWriter notes when the first speak event written to it is flushed.
type timingWriter struct {
	http.ResponseWriter
	start   time.Time
	pending bool // a speak event was written, not flushed yet
	first   time.Duration
}

var speakEvent = []byte("\nevent: speak\n")

func (t *timingWriter) Write(p []byte) (int, error) {
	if t.first == 0 && !t.pending && bytes.Contains(p, speakEvent) {
		t.pending = true
	}
	return t.ResponseWriter.Write(p)
}

// FlushError flushes, for http.ResponseController.
func (t *timingWriter) FlushError() error {
	err := http.NewResponseController(t.ResponseWriter).Flush()
	if t.pending {
		t.pending = false
		t.first = time.Since(t.start)
	}
	return err
}

func (t *timingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// serverOf builds the handler of the -serve kind; vt counts an engine's voice sockets.
func serverOf(cfg *config, vt *voiceTimer) (http.Handler, func(), error) {
	nop := func() {}
	switch cfg.serve {
	case serveBare:
		mux := http.NewServeMux()
		mux.Handle("/", &enginetest.BareSSE{FirstTokenDelay: cfg.firstToken, TokenInterval: cfg.tokenInterval,
			Deltas: cfg.deltas, Widgets: cfg.widgets})
		mux.HandleFunc("POST "+engine.PathCreateSession, bareSession)
		return mux, nop, nil
	case serveBackend:
		return enginetest.BenchBackend{Latency: cfg.backendLatency}, nop, nil
	case serveDemobank:
		return demobank.New(nil), nop, nil
	case serveEngine, serveDemo:
		backend := cfg.backend
		if backend == "" {
			backend = "http://127.0.0.1:1" // no tool is ever called
		}
		var (
			tenant *engine.Tenant
			model  engine.Model
			err    error
		)
		if cfg.serve == serveDemo {
			tenant, err = demobank.Tenant(backend, "")
			model = intent.New(nil)
		} else {
			tenant = &engine.Tenant{Key: benchKey, Name: "Bench", Locale: "en",
				Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: backend}}}
			if cfg.toolCalls > 0 {
				tenant.Tools = json.RawMessage(enginetest.BenchTools)
			}
			err = tenant.Validate()
			model = benchModel(cfg)
		}
		var guards *engine.Guards
		if cfg.chain && err == nil {
			chain, cerr := fallback.New(nil, fallback.Named{Name: "primary", Model: model},
				fallback.Named{Name: "intent", Model: intent.New(nil), Degraded: true})
			model, err = chain, cerr
			guards = &engine.Guards{BeforeTurn: fallback.BeforeTurn(func(*engine.Tenant) engine.Model { return chain })}
		}
		if err != nil {
			return nil, nop, err
		}
		tenants, err := engine.NewStaticTenants(tenant)
		if err != nil {
			return nil, nop, err
		}
		key := make([]byte, 32)
		rand.Read(key)
		// The turn's log line is formatted as in production; where it goes is not measured.
		log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
		transcriber, synthesizer := benchSpeech(cfg)
		obs := &engine.Observer{Socket: vt.socket}
		var meter *usage.Meter
		if cfg.usage {
			if meter, err = usage.New(&usage.Options{Sink: &usage.Memory{}, Logger: log}); err != nil {
				return nil, nop, err
			}
			obs = meter.Observer(obs)
		}
		e, err := engine.New(engine.Config{Tenants: tenants, Model: model, Toolset: httptools.New(nil),
			SigningKey: key, Logger: log, Transcriber: transcriber, Synthesizer: synthesizer,
			Observer: obs, Guards: guards,
			// A bench measures what the engine can do: no bound of a public deployment applies.
			MaxConcurrentTurns: -1, MaxConcurrentSyntheses: -1, MaxSynthesesPerUser: -1,
			MaxConcurrentTranscriptions: -1, MaxTranscriptionsPerUser: -1})
		if err != nil {
			return nil, nop, err
		}
		sockets, err := voice.New(e, &voice.Options{MaxSockets: -1, MaxSocketsPerUser: -1, AudioMemory: -1})
		if err != nil {
			return nil, nop, err
		}
		return e.Handler(sockets.Routes()...), func() {
			e.Close()
			if meter != nil {
				meter.Close(context.Background())
			}
		}, nil
	}
	return nil, nop, fmt.Errorf("-serve: unknown server %q", cfg.serve)
}
