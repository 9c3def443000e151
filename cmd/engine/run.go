package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/fallback"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/mcptools"
	"github.com/convengine/engine/passkey"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/telephony"
	"github.com/convengine/engine/tenantfile"
	"github.com/convengine/engine/toolsets"
	"github.com/convengine/engine/usage"
	"github.com/convengine/engine/voice"
	"github.com/convengine/engine/widgets"
)

// Server limits. Responses have no overall write time-out, a turn may take as long as its tenant
// allows; each write is bounded by -write-timeout instead.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 120 * time.Second
	// maxHeaderBytes lets a request with more forwarded headers than the engine takes reach it
	// (70 of 1 KB), so that the engine drops the excess and the turn goes on; past it the
	// engine's listener answers 431 headers_too_large. The header blocks still arriving on all
	// connections together are bounded by the engine's Config.HeaderMemory.
	maxHeaderBytes = 128 << 10
	// defaultDrainTimeout is how long the turns running at SIGTERM get to finish (-drain-timeout).
	defaultDrainTimeout = 30 * time.Second
)

type options struct {
	addr, tenants, publicURL, logLevel, redisURL, speech string
	// records is where the conversation record is kept (-records): see parseRecords.
	records          string
	metrics, version bool

	// debugAddr serves runtime figures and profiles, for soaks and diagnosis; off when empty.
	debugAddr string
	// The bounds on what strangers can start: Config.MaxConcurrentTurns,
	// MaxConcurrentSyntheses and WriteTimeout, voice.Options.MaxSockets, MaxSocketsPerUser and
	// AudioMemory (in MiB); 0 means the engine's default.
	maxTurns, maxSyntheses, maxSockets, maxUserSockets, audioMemoryMiB int
	writeTimeout                                                       time.Duration

	// Config.MaxSynthesesPerUser, MaxConcurrentTranscriptions and MaxTranscriptionsPerUser.
	maxUserSyntheses, maxTranscriptions, maxUserTranscriptions int
	// bargeIn and endOfSpeech are voice.Options.BargeIn and EndOfSpeech.
	bargeIn, endOfSpeech time.Duration
	// drainDelay is how long the server keeps serving after SIGTERM with its readiness failing,
	// for the balancer to stop sending; drainTimeout how long the turns in flight then get.
	drainDelay, drainTimeout time.Duration

	// webauthnRPID and webauthnOrigins name the relying party of passkeys (Config.Passkeys).
	webauthnRPID, webauthnOrigins string

	// sipAddr answers the tenants' numbers over SIP (sip.go); sipRTPPorts and sipExternalIP are
	// its RTP ports and its address behind NAT.
	sipAddr, sipRTPPorts, sipExternalIP string

	// demoWeb serves the web client at /demo/: by default with the offline demo only.
	demoWeb, demoWebSet bool

	// handoffWebhook and handoffSecret send the demo tenants' handoffs to a contact centre's
	// webhook instead of the demo desk.
	handoffWebhook, handoffSecret string
}

// run starts the server and serves until ctx is cancelled, then drains: its readiness fails at
// once, it serves on for the drain delay (the balancer stops sending meanwhile), then it refuses
// new turns, resumes and sockets (503 shutting_down, retryable), closes the voice sockets with
// 1012 once their turns are answered, and waits up to the drain timeout for the turns in flight.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	opts, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	if opts.version {
		fmt.Fprintln(stdout, "engine", engine.Version)
		return nil
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(opts.logLevel)); err != nil {
		return fmt.Errorf("-log-level: %q is not debug, info, warn or error", opts.logLevel)
	}
	privacy, piiCounts, err := newPrivacy()
	if err != nil {
		return err
	}
	log := slog.New(logHandler(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}), privacy))

	place, err := parseRecords(opts.records, getenv)
	if err != nil {
		return err
	}
	if place.why != "" {
		log.Warn("the conversation record is off: " + place.why)
	}
	key, err := engineKey(getenv("ENGINE_SIGNING_KEY"), opts.redisURL != "", place, log)
	if err != nil {
		return err
	}
	stores, closeStores, err := openStores(ctx, opts.redisURL, key, log)
	if err != nil {
		return err
	}
	defer closeStores()

	intents := intent.New(nil)
	chosen, err := chooseModels(getenv, intents, log)
	if err != nil {
		return err
	}
	events := &breakerEvents{log: log}
	tools, closeTools := newToolset(events)
	defer closeTools()
	var (
		tenants engine.TenantStore
		demo    *demo
	)
	router := newModelRouter(chosen.model, intents, events)
	// The address first: the passkeys' relying party, which the demo's bank verifies too,
	// depends on its port.
	demoWeb := opts.demoWeb && (opts.tenants == "" || opts.demoWebSet)
	ln, err := net.Listen("tcp", opts.addr)
	if err != nil {
		return err
	}
	serving := false
	defer func() {
		if !serving {
			ln.Close()
		}
	}()
	rp, err := passkeyOptions(opts, ln.Addr(), demoWeb)
	if err != nil {
		return err
	}
	var passkeys engine.Passkeys
	if rp != nil {
		p, err := passkey.New(*rp)
		if err != nil {
			return err
		}
		passkeys = p
	}
	// The tenants served now, as the last load made them: the record's retention reads them.
	var current atomic.Pointer[engine.TenantStore]
	phones := &telephony.Directory{} // the tenants' phone numbers (phone.go)
	if opts.tenants != "" {
		load := func() (engine.TenantStore, error) {
			s, err := loadTenants(opts.tenants, getenv, intents, router, privacy, log)
			if err == nil {
				current.Store(&s)
				err = phones.Replace(s.(*engine.StaticTenants).All()...)
			}
			return s, err
		}
		store, err := load()
		if err != nil {
			return err
		}
		reloadable := engine.NewReloadableTenants(store)
		stopReloads := reloadOnHangup(ctx, reloadable, load, log)
		defer stopReloads()
		tenants = reloadable
	} else {
		demo, err = startDemo(log, stdout, rp)
		if err != nil {
			return err
		}
		defer demo.Close()
		demo.answerPhones(getenv)
		if err := phones.Replace(demo.tenant, demo.proof); err != nil {
			return err
		}
		if err := checkTenants([]*engine.Tenant{demo.tenant, demo.proof}, intents); err != nil {
			return fmt.Errorf("demo tenant: %w", err)
		}
		privacy.Know(demo.tenant, demo.proof) // checked above
		tenants, err = engine.NewStaticTenants(demo.tenant, demo.proof)
		if err != nil {
			return err
		}
		current.Store(&tenants)
	}

	if err := chosen.addSpeech(opts.speech, log); err != nil {
		return err
	}
	if err := chosen.addCloudSpeech(opts.speech, getenv, router, log); err != nil {
		return err
	}
	cfg := engineConfig(tenants, router, tools, chosen, key, privacy, log, demo != nil)
	cfg.PublicURL, cfg.MaxConcurrentTurns = opts.publicURL, opts.maxTurns
	cfg.MaxConcurrentSyntheses, cfg.WriteTimeout = opts.maxSyntheses, opts.writeTimeout
	cfg.MaxSynthesesPerUser, cfg.MaxConcurrentTranscriptions = opts.maxUserSyntheses, opts.maxTranscriptions
	cfg.MaxTranscriptionsPerUser = opts.maxUserTranscriptions
	stores.apply(&cfg)
	previous, err := previousKeys(getenv("ENGINE_PREVIOUS_SIGNING_KEYS"))
	if err != nil {
		return err
	}
	records, closeRecords, err := openRecorder(ctx, place, key, previous, tenantsOf(&current), log)
	if err != nil {
		return err
	}
	defer closeRecords() // after the engine's and the switchboard's shutdown: the last turns are written and checkpointed
	if records != nil {
		cfg.Recorder = records
	}
	// A person's messages are spoken on the customer's voice socket, made below once the
	// engine is: handoffs start only once the server serves.
	var sockets *voice.Server
	say := func(ctx context.Context, st *handoff.State, spec *widgets.Spec) {
		sockets.Say(ctx, st.Tenant, st.User, st.ConversationID, spec)
	}
	sb, deskKey, err := newSwitchboard(opts, tenants, privacy, chosen, demo != nil, records, say, stores, log)
	if err != nil {
		return err
	}
	defer sb.Close()
	cfg.Guards = sb.Guards(cfg.Guards)
	cfg.Toolset = toolsets.Combine(cfg.Toolset, sb.Toolset())
	mx, err := newMetrics(ctx, opts.metrics, getenv)
	if err != nil {
		return err
	}
	if mx != nil {
		defer func() {
			// After the server: the last figures go out over OTLP, for a bounded time.
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := mx.provider.Shutdown(sctx); err != nil {
				log.Warn("exporting the last metrics failed", "err", err)
			}
		}()
		if mx.otlp {
			log.Info("metrics: exported over OTLP/HTTP")
		}
	}
	tp, err := newTracing(ctx, getenv)
	if err != nil {
		return err
	}
	if tp != nil {
		defer func() {
			// After the server: the last turns' spans go out, for a bounded time.
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				log.Warn("exporting the last spans failed", "err", err)
			}
		}()
		log.Info("tracing: spans exported over OTLP/HTTP")
	}
	obs, err := newObserver(mx, tp, privacy, getenv, opts.tenants != "")
	if err != nil {
		return err
	}
	meter, ledger, err := newMeter(stores, mx, log)
	if err != nil {
		return err
	}
	if err := piiCounts.start(mx); err != nil {
		return err
	}
	defer func() {
		// After the engine: the last turns' records are written, for a bounded time.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := meter.Close(cctx); err != nil {
			log.Error("usage records lost at shutdown", "err", err)
		}
	}()
	cfg.Observer = meter.Observer(obs)
	events.obs.Store(cfg.Observer)
	cfg.Passkeys = passkeys
	eng, err := engine.New(cfg)
	if err != nil {
		return err
	}
	defer eng.Close() // after the server: stops warm-ups still running
	if err := sb.Bind(eng); err != nil {
		return err
	}
	sockets, err = voice.New(eng, &voice.Options{MaxSockets: opts.maxSockets, MaxSocketsPerUser: opts.maxUserSockets,
		AudioMemory: int64(opts.audioMemoryMiB) << 20, BargeIn: opts.bargeIn, EndOfSpeech: opts.endOfSpeech,
		RecognizerEndOfSpeech: true}) // for the tenants whose speech section chose it (recognizers.Listen)
	if err != nil {
		return err
	}
	phone := newPhone(eng, sb)
	phoneRoutes, err := phoneLines(eng, phone, phones, opts.publicURL, getenv, key, stores, log)
	if err != nil {
		return err
	}
	sipServer, err := sipLines(ctx, eng, phone, phones, opts, log)
	if err != nil {
		return err
	}
	if sipServer != nil {
		defer sipServer.Close() // after the engine's shutdown, whose goodbyes end the calls
	}

	var draining atomic.Bool // SIGTERM came: readiness fails
	var work atomic.Int64    // requests in flight that are not event streams or sockets
	srv := &http.Server{
		Handler:           countWork(routes(eng, sockets, sb, deskKey, demoWeb, demo, &draining, phoneRoutes...), &work),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	base := "http://" + ln.Addr().String()
	var banner strings.Builder
	if demo != nil {
		printDemo(&banner, base, demo)
		printPhones(&banner, demo)
		printSIP(&banner, demo, sipServer)
	}
	if demoWeb {
		fmt.Fprintf(&banner, "\nWeb client: %s/demo/\n", base)
		fmt.Fprintf(&banner, "Agent desk: %s/demo/desk/  desk key: %s\n", base, deskKey)
	}
	fmt.Fprintf(&banner, "\nConversation record: %s\n", place)
	if opts.debugAddr != "" {
		stopDebug, addr, err := serveDebug(opts.debugAddr, mx, usage.Handler(ledger), records, log)
		if err != nil {
			return err
		}
		defer stopDebug()
		fmt.Fprintf(&banner, "\nDebug figures and profiles (private): http://%s/debug/stats\n", addr)
		fmt.Fprintf(&banner, "Usage by tenant (private): http://%s/usage?tenant=\n", addr)
		if records != nil {
			fmt.Fprintf(&banner, "Conversation record (private): http://%s/records/conversations?tenant=, its public key at /records/public-key\n", addr)
		}
		if mx != nil && mx.handler != nil {
			fmt.Fprintf(&banner, "Prometheus metrics (private): http://%s/metrics\n", addr)
		}
	}
	// One write, so that whoever waits for the address sees the whole banner.
	fmt.Fprintf(stdout, "%s\nengine listening on %s\n", banner.String(), base)

	errc := make(chan error, 1)
	serving = true
	go func() { errc <- srv.Serve(eng.Listener(srv, ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Readiness fails first, so that the balancer stops sending; what still arrives meanwhile
	// is served.
	draining.Store(true)
	log.Info("draining: readiness fails", "delay", opts.drainDelay, "timeout", opts.drainTimeout)
	time.Sleep(opts.drainDelay)
	log.Info("shutting down: waiting for running turns", "timeout", opts.drainTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), opts.drainTimeout)
	defer cancel()
	// The engine refuses new turns, resumes and sockets from now on (503 shutting_down, which
	// a client or a balancer retries elsewhere), and closes the voice sockets (1012), which the
	// server does not track, each once its running turn is answered. The listener stays open
	// for those refusals until the work in flight is over; then the server shuts down.
	closed := make(chan error, 1)
	go func() { closed <- eng.Shutdown(sctx) }()
	for work.Load() > 0 && sctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	err = srv.Shutdown(sctx)
	if serr := <-closed; serr != nil {
		log.Warn("voice sockets still answering at the deadline were cut off", "err", serr)
	}
	if err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var o options
	fs := flag.NewFlagSet("engine", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", env("ENGINE_ADDR", "127.0.0.1:8080"), "listen address (ENGINE_ADDR)")
	fs.StringVar(&o.tenants, "tenants", env("ENGINE_TENANTS", ""), "tenants file, YAML or JSON; replaces the demo tenant (ENGINE_TENANTS)")
	fs.StringVar(&o.publicURL, "public-url", env("ENGINE_PUBLIC_URL", ""), "public base URL of the engine (ENGINE_PUBLIC_URL)")
	fs.StringVar(&o.records, "records", env("ENGINE_RECORDS", ""), "the conversation record: sqlite:PATH, a postgres:// URL, or off; empty is a SQLite file in the user's data directory (ENGINE_RECORDS)")
	fs.StringVar(&o.redisURL, "redis", env("ENGINE_REDIS_URL", ""), "Redis URL (redis://, rediss://, redis+cluster://, redis+sentinel:// with master_name=) shared by every replica; empty keeps state in memory (ENGINE_REDIS_URL)")
	fs.BoolVar(&o.metrics, "metrics", env("ENGINE_METRICS", "") == "true", "serve Prometheus metrics at /metrics of -debug-addr, which it needs (ENGINE_METRICS=true)")
	fs.StringVar(&o.logLevel, "log-level", env("ENGINE_LOG_LEVEL", "info"), "debug, info, warn or error (ENGINE_LOG_LEVEL)")
	fs.StringVar(&o.speech, "speech", env("ENGINE_SPEECH", "auto"), "auto: espeak-ng and pocketsphinx when installed; off: no speech (ENGINE_SPEECH)")
	fs.BoolVar(&o.version, "version", false, "print the engine's version and exit")
	fs.StringVar(&o.handoffWebhook, "handoff-webhook", env("ENGINE_HANDOFF_WEBHOOK", ""), "contact centre webhook the demo tenants hand conversations to, instead of the demo desk (ENGINE_HANDOFF_WEBHOOK)")
	fs.StringVar(&o.handoffSecret, "handoff-secret", env("ENGINE_HANDOFF_SECRET", ""), "secret that signs the handoff webhook's events and its answers, at least 16 bytes (ENGINE_HANDOFF_SECRET)")
	fs.StringVar(&o.sipAddr, "sip", env("ENGINE_SIP_ADDR", ""), "address answering the tenants' numbers over SIP, UDP and TCP, such as 0.0.0.0:5060; off when empty (ENGINE_SIP_ADDR)")
	fs.StringVar(&o.sipRTPPorts, "sip-rtp-ports", env("ENGINE_SIP_RTP_PORTS", ""), "UDP ports of the SIP calls' RTP, such as 10000-10100, two a call; empty: any (ENGINE_SIP_RTP_PORTS)")
	fs.StringVar(&o.sipExternalIP, "sip-external-ip", env("ENGINE_SIP_EXTERNAL_IP", ""), "the engine's address as the SIP trunks reach it, when behind NAT (ENGINE_SIP_EXTERNAL_IP)")
	fs.StringVar(&o.debugAddr, "debug-addr", env("ENGINE_DEBUG_ADDR", ""), "private address serving runtime figures (/debug/stats) and pprof profiles; off when empty (ENGINE_DEBUG_ADDR)")
	var errs []error
	intFlag := func(p *int, name, envName, usage string) {
		v := env(envName, "0")
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not an integer", envName, v))
		}
		fs.IntVar(p, name, n, usage+" ("+envName+")")
	}
	intFlag(&o.maxTurns, "max-turns", "ENGINE_MAX_TURNS", "turns the process runs at once, over SSE and voice sockets; past it a turn is answered 503 overloaded (0: 1024; negative: no bound)")
	intFlag(&o.maxSyntheses, "max-syntheses", "ENGINE_MAX_SYNTHESES", "tts syntheses the process runs at once; past it 503 overloaded (0: 32; negative: no bound)")
	intFlag(&o.maxUserSyntheses, "max-user-syntheses", "ENGINE_MAX_USER_SYNTHESES", "tts syntheses one user of a tenant may hold at once; past it 429 rate_limited (0: 4; negative: no bound)")
	intFlag(&o.maxTranscriptions, "max-transcriptions", "ENGINE_MAX_TRANSCRIPTIONS", "recordings being transcribed or waiting for the recogniser at once, of turns and voice sockets; past it 503 overloaded at once (0: 8; negative: no bound)")
	intFlag(&o.maxUserTranscriptions, "max-user-transcriptions", "ENGINE_MAX_USER_TRANSCRIPTIONS", "recordings of one user of a tenant being transcribed at once; past it 429 rate_limited (0: 2; negative: no bound)")
	intFlag(&o.maxSockets, "max-sockets", "ENGINE_MAX_SOCKETS", "voice sockets open at once; past it 503 overloaded (0: 1024; negative: no bound)")
	intFlag(&o.maxUserSockets, "max-user-sockets", "ENGINE_MAX_USER_SOCKETS", "voice sockets one user of a tenant may hold open; past it 429 rate_limited (0: 4; negative: no bound)")
	intFlag(&o.audioMemoryMiB, "audio-memory", "ENGINE_AUDIO_MEMORY", "MiB of users' speech all voice sockets together hold before transcription; past it the utterance is refused as overloaded (0: 64; negative: no bound)")
	fs.StringVar(&o.webauthnRPID, "webauthn-rp-id", env("ENGINE_WEBAUTHN_RP_ID", ""), "relying party id of the passkeys that gate actions, the pages' domain (default with the web client: localhost) (ENGINE_WEBAUTHN_RP_ID)")
	fs.StringVar(&o.webauthnOrigins, "webauthn-origins", env("ENGINE_WEBAUTHN_ORIGINS", ""), "origins of the pages that register passkeys, comma-separated (default with the web client: http://localhost:<port>) (ENGINE_WEBAUTHN_ORIGINS)")
	durationFlag := func(p *time.Duration, name, envName, usage string) {
		v := env(envName, "0s")
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a duration such as 10s", envName, v))
		}
		fs.DurationVar(p, name, d, usage+" ("+envName+")")
	}
	durationFlag(&o.writeTimeout, "write-timeout", "ENGINE_WRITE_TIMEOUT", "how long one write of the tts audio or a turn stream waits for a client that does not read before the response is abandoned (0: 10s)")
	durationFlag(&o.bargeIn, "barge-in", "ENGINE_BARGE_IN", "how long a user must speak over an answer on the voice socket to cancel it (0: 200ms)")
	durationFlag(&o.endOfSpeech, "end-of-speech", "ENGINE_END_OF_SPEECH", "silence after speech that ends an utterance on the voice socket without the client's end_of_speech (0: off)")
	durationFlag(&o.drainDelay, "drain-delay", "ENGINE_DRAIN_DELAY", "after SIGTERM, how long to keep serving with /readyz failing, for the load balancer to stop sending (0: none; set it to the balancer's check interval times its fall count)")
	durationFlag(&o.drainTimeout, "drain-timeout", "ENGINE_DRAIN_TIMEOUT", "after SIGTERM and the drain delay, how long the turns in flight get to finish before they are cut (0: 30s)")
	if err := errors.Join(errs...); err != nil {
		return o, err
	}
	fs.BoolVar(&o.demoWeb, "demo-web", true, "serve the reference web client at /demo/; on by default with the offline demo, off with -tenants unless set (ENGINE_DEMO_WEB)")
	if v := getenv("ENGINE_DEMO_WEB"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return o, fmt.Errorf("ENGINE_DEMO_WEB: %q is not true or false", v)
		}
		o.demoWeb, o.demoWebSet = b, true
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.writeTimeout < 0 || o.bargeIn < 0 || o.endOfSpeech < 0 || o.drainDelay < 0 || o.drainTimeout < 0 {
		return o, errors.New("-write-timeout, -barge-in, -end-of-speech, -drain-delay and -drain-timeout cannot be negative")
	}
	o.drainTimeout = cmp.Or(o.drainTimeout, defaultDrainTimeout)
	if o.metrics && o.debugAddr == "" {
		return o, errors.New("-metrics needs -debug-addr: metrics are served on the private debug address only, never on the engine's")
	}
	fs.Visit(func(f *flag.Flag) { o.demoWebSet = o.demoWebSet || f.Name == "demo-web" })
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return o, nil
}

// signingKey decodes ENGINE_SIGNING_KEY, or generates a key when it is empty.
func signingKey(b64 string) (key []byte, generated bool, err error) {
	if b64 == "" {
		key = make([]byte, 32)
		rand.Read(key)
		return key, true, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err = enc.DecodeString(strings.TrimSpace(b64)); err == nil {
			break
		}
	}
	if err != nil {
		return nil, false, errors.New("ENGINE_SIGNING_KEY is not valid base64")
	}
	if len(key) < 32 {
		return nil, false, fmt.Errorf("ENGINE_SIGNING_KEY decodes to %d bytes; it needs at least 32", len(key))
	}
	return key, false, nil
}

// loadTenants reads a tenants file and checks its tenants and models; the router's file models
// become the file's, and the privacy's policies of log lines the tenants'.
func loadTenants(path string, getenv func(string) string, intents *intent.Model, router *modelRouter, privacy *pii.Privacy, log *slog.Logger) (engine.TenantStore, error) {
	f, err := tenantfile.LoadFile(path, &tenantfile.Options{Expand: getenv})
	if err != nil {
		return nil, err
	}
	store, err := engine.NewStaticTenants(f.Tenants...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	routes, err := router.fileModels(f)
	if err = errors.Join(err, checkTenants(f.Tenants, intents)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	router.file.Store(routes)
	privacy.Know(f.Tenants...) // checked above
	for name, m := range f.Models {
		log.Info("model of the tenants file", "name", name, "model", m.Model, "host", hostOf(m.BaseURL))
	}
	return store, nil
}

// engineConfig is the part of the engine's configuration that the server and the test command
// share: the tenants, the model of each, the tools, the speech, the signing key, each tenant's
// privacy policy and, for the demo, its bank's card widget.
func engineConfig(tenants engine.TenantStore, router *modelRouter, tools engine.Toolset, chosen models, key []byte, privacy *pii.Privacy, log *slog.Logger, demo bool) engine.Config {
	cfg := engine.Config{
		Tenants: tenants, Model: engine.ModelByTenant(router.pick), Toolset: tools, SigningKey: key,
		Synthesizer: chosen.synthesizer, Transcriber: chosen.transcriber, Logger: log,
		// A tenant whose every model is down is refused before its stream starts.
		Guards: &engine.Guards{BeforeTurn: fallback.BeforeTurn(router.pick)},
	}
	if privacy != nil {
		cfg.Privacy = privacy
	}
	if demo {
		cfg.Widgets = []engine.WidgetType{demobank.CardWidget} // the demo bank's own card
	}
	return cfg
}

// checkTenants validates each tenant's tools and intents at start, so that a broken tenants
// file stops the server instead of failing turns.
func checkTenants(tenants []*engine.Tenant, model *intent.Model) error {
	var errs []error
	for _, t := range tenants {
		if len(t.Tools) > 0 {
			if _, err := httptools.Parse(t.Tools); err != nil {
				errs = append(errs, fmt.Errorf("tenant %q: %w", t.Key, err))
			}
		}
		if len(t.MCP) > 0 {
			if _, err := mcptools.ParseServers(t.MCP); err != nil {
				errs = append(errs, fmt.Errorf("tenant %q: %w", t.Key, err))
			}
		}
		if len(t.Intents) > 0 {
			if err := model.Check(t); err != nil {
				errs = append(errs, fmt.Errorf("tenant %q: %w", t.Key, err))
			}
		}
		if err := pii.Check(t); err != nil {
			errs = append(errs, fmt.Errorf("tenant %q: %w", t.Key, err))
		}
	}
	return errors.Join(errs...)
}

// passkeyOptions is the relying party of passkeys: the one the flags name, or, serving the web
// client, this machine's pages at http://localhost:<port> (WebAuthn refuses IP addresses as
// relying party ids, so the web client's passkeys need it opened at localhost); none otherwise.
func passkeyOptions(opts options, addr net.Addr, demoWeb bool) (*passkey.Options, error) {
	rpID, origins := opts.webauthnRPID, opts.webauthnOrigins
	if rpID == "" && demoWeb {
		rpID = "localhost"
		if tcp, ok := addr.(*net.TCPAddr); ok && origins == "" {
			origins = fmt.Sprintf("http://localhost:%d", tcp.Port)
		}
	}
	if rpID == "" {
		if origins != "" {
			return nil, errors.New("-webauthn-origins needs -webauthn-rp-id, the domain of those origins")
		}
		return nil, nil
	}
	var list []string
	for o := range strings.SplitSeq(origins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			list = append(list, o)
		}
	}
	return &passkey.Options{RPID: rpID, Origins: list, DisplayName: "Conversational engine"}, nil
}
