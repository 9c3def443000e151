package voice_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/voice"
)

// voiceBenchServer serves an engine whose model streams a three-sentence answer over one
// second, speaking with espeak-ng. The transcriber is pocketsphinx when realEars is set, and
// otherwise one that hears "what is my balance" at once, so that the figures show the answer
// and its synthesis alone.
func voiceBenchServer(b *testing.B, realEars bool) (*httptest.Server, http.Header) {
	answer := threeSentences()
	cfg := engine.Config{
		Model:       &enginetest.ScriptedModel{Delay: time.Second / time.Duration(len(answer)), Steps: [][]engine.ModelEvent{answer}},
		Synthesizer: newEspeak(b),
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if !realEars {
		cfg.Transcriber = transcriberFunc(func(context.Context, []int16, int, string) (string, error) {
			return "what is my balance", nil
		})
	}
	d := enginetest.NewDemo(b, &enginetest.DemoOptions{Config: cfg})
	b.Cleanup(func() { d.Engine.Shutdown(context.Background()) })
	srv := d.Server
	return srv, demoHeaders()
}

// benchmarkVoiceLatency measures, per turn, the time from end_of_speech to the first audio
// message, to the last, and to done.
func benchmarkVoiceLatency(b *testing.B, realEars bool) {
	srv, hdr := voiceBenchServer(b, realEars)
	ws, _, err := websocket.Dial(b.Context(), "ws"+strings.TrimPrefix(srv.URL, "http")+engine.PathStream, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	speech := say(b, "What is my balance?")
	var frames [][]byte
	for i := 0; i < len(speech); i += 320 {
		m, _ := json.Marshal(map[string]string{"type": "audio", "chunk": base64.StdEncoding.EncodeToString(audio.AppendPCM(nil, speech[i:min(i+320, len(speech))]))})
		frames = append(frames, m)
	}
	var first, last, done time.Duration
	b.ResetTimer()
	for b.Loop() {
		for _, f := range frames {
			if err := ws.Write(b.Context(), websocket.MessageText, f); err != nil {
				b.Fatal(err)
			}
		}
		if err := ws.Write(b.Context(), websocket.MessageText, []byte(`{"type":"end_of_speech"}`)); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		var firstAudio, lastAudio time.Duration
	turn:
		for {
			_, data, err := ws.Read(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			var m struct{ Type string }
			json.Unmarshal(data, &m)
			switch m.Type {
			case "audio":
				lastAudio = time.Since(start)
				if firstAudio == 0 {
					firstAudio = lastAudio
				}
			case "error":
				b.Fatalf("%s", data)
			case "done":
				done += time.Since(start)
				break turn
			}
		}
		first += firstAudio
		last += lastAudio
	}
	n := float64(b.N)
	b.ReportMetric(float64(first.Microseconds())/n/1000, "ms-to-first-audio")
	b.ReportMetric(float64(last.Microseconds())/n/1000, "ms-to-last-audio")
	b.ReportMetric(float64(done.Microseconds())/n/1000, "ms-to-done")
}

// BenchmarkVoiceTurnLatency: a three-sentence answer streamed over one second, spoken by
// espeak-ng; the transcriber answers at once.
func BenchmarkVoiceTurnLatency(b *testing.B) { benchmarkVoiceLatency(b, false) }

// BenchmarkVoiceTurnLatencyPocketsphinx is the same with pocketsphinx listening.
func BenchmarkVoiceTurnLatencyPocketsphinx(b *testing.B) { benchmarkVoiceLatency(b, true) }

var (
	idleSockets = flag.Int("voice.sockets", 2000, "idle voice sockets BenchmarkIdleSocketMemory opens")
	idleProfile = flag.String("voice.profile", "", "file prefix: BenchmarkIdleSocketMemory writes PREFIX.heap and PREFIX.goroutine while the sockets are open")
)

// BenchmarkIdleSocketMemory opens -voice.sockets idle voice sockets from a child process and
// reports the engine's memory and goroutines per socket. The clients live in another process
// so that their memory is not counted.
func BenchmarkIdleSocketMemory(b *testing.B) {
	if testing.Short() {
		b.Skip("opens thousands of sockets")
	}
	n := *idleSockets
	h := headers()
	store, err := engine.NewStaticTenants(testTenant())
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.New(engine.Config{Tenants: store, Model: &enginetest.ScriptedModel{}, SigningKey: testSigningKey,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	v, err := voice.New(e, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(e.Handler(v.Routes()...))
	defer srv.Close()
	defer e.Shutdown(context.Background())

	for b.Loop() {
		before := heapAndStacks()
		goroutines := runtime.NumGoroutine()
		cmd := exec.Command(os.Args[0], "-test.run=^TestIdleSocketClients$")
		cmd.Env = append(os.Environ(), "VOICE_BENCH_URL="+"ws"+strings.TrimPrefix(srv.URL, "http")+engine.PathStream,
			"VOICE_BENCH_SOCKETS="+strconv.Itoa(n), "VOICE_BENCH_KEY="+h.Get("X-Engine-Key"), "VOICE_BENCH_TOKEN="+h.Get("X-Token"))
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "ready") {
			b.Fatalf("the clients did not connect: %q %v", line, err)
		}
		time.Sleep(500 * time.Millisecond) // let the last handlers settle into their reads
		after := heapAndStacks()
		b.ReportMetric(float64(after.total()-before.total())/float64(n), "bytes/socket")
		b.ReportMetric(float64(int64(after.stack)-int64(before.stack))/float64(n), "stack-bytes/socket")
		b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/float64(n), "goroutines/socket")
		b.ReportMetric(float64(n), "sockets")
		if *idleProfile != "" {
			writeProfiles(b, *idleProfile)
		}
		stdin.Close()
		cmd.Wait()
	}
}

// writeProfiles writes the heap profile and the goroutines' stacks to prefix.heap and
// prefix.goroutine.
func writeProfiles(b *testing.B, prefix string) {
	for _, name := range []string{"heap", "goroutine"} {
		f, err := os.Create(prefix + "." + name)
		if err != nil {
			b.Fatal(err)
		}
		debug := 0
		if name == "goroutine" {
			debug = 1
		}
		err = pprof.Lookup(name).WriteTo(f, debug)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// memory is the heap and the goroutine stacks in use.
type memory struct{ heap, stack uint64 }

func (m memory) total() int64 { return int64(m.heap + m.stack) }

// heapAndStacks returns the bytes of heap and goroutine stacks in use after a collection.
func heapAndStacks() memory {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memory{heap: m.HeapInuse, stack: m.StackInuse}
}

// TestIdleSocketClients is the client process of BenchmarkIdleSocketMemory: it opens the
// sockets, says "ready", and holds them until its standard input closes.
func TestIdleSocketClients(t *testing.T) {
	url := os.Getenv("VOICE_BENCH_URL")
	if url == "" {
		t.Skip("the client process of BenchmarkIdleSocketMemory")
	}
	n, _ := strconv.Atoi(os.Getenv("VOICE_BENCH_SOCKETS"))
	hdr := http.Header{"X-Engine-Key": {os.Getenv("VOICE_BENCH_KEY")}, "X-Token": {os.Getenv("VOICE_BENCH_TOKEN")}, "X-Request-Id": {"prod-bench"}}
	conns := make([]*websocket.Conn, 0, n)
	for i := range n {
		ws, _, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPHeader: hdr})
		if err != nil {
			t.Fatalf("socket %d: %v", i, err)
		}
		ws.CloseRead(context.Background()) // answer pings
		conns = append(conns, ws)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, ws := range conns {
		ws.CloseNow()
	}
}
