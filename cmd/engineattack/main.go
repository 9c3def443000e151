// Command engineattack repeats, against a running engine, the attacks a stranger with the
// public engine key can make, and reports what they cost the engine: its resident memory and
// its child processes (read from /proc, so the engine runs on this machine and -pid names it)
// before, at the worst moment during, and after each attack, with the time a normal user's
// turn took meanwhile.
//
// The attacks:
//
//	tts       -n slow readers each start a long synthesis and stop reading
//	sockets   -n voice sockets (distinct users) each send 60 s of speech and never end it
//	sessions  -sessions create-session requests with 8 KiB of metadata, 1 000 users
//	metrics   -n requests for 404 paths of 60 KB, then one scrape of -metrics
//	headers   a turn with 70 forwarded headers of 1 KB, and one with 1.2 MB of headers
//
// Example, against the reference server (docs/benchmarks.md#attacks):
//
//	go run ./cmd/engine -metrics -debug-addr 127.0.0.1:8081 &
//	go run ./cmd/engineattack -metrics http://127.0.0.1:8081/metrics -pid $(pgrep -n engine) -attack all -n 300
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
)

type config struct {
	target, key, metrics string
	pid, n, sessions     int
	hold                 time.Duration
}

func main() {
	var c config
	attack := flag.String("attack", "all", "tts, sockets, sessions, metrics, headers or all")
	flag.StringVar(&c.target, "target", "http://127.0.0.1:8080", "base URL of the engine")
	flag.StringVar(&c.key, "key", "pk_demo", "engine key")
	flag.StringVar(&c.metrics, "metrics", "", "URL of the engine's Prometheus metrics, on its debug address (-debug-addr); the metrics attack scrapes it")
	flag.IntVar(&c.pid, "pid", 0, "process id of the engine (required)")
	flag.IntVar(&c.n, "n", 300, "connections or requests of each attack")
	flag.IntVar(&c.sessions, "sessions", 10000, "sessions the sessions attack creates")
	flag.DurationVar(&c.hold, "hold", 15*time.Second, "how long the attacks that hold something hold it")
	flag.Parse()
	if c.pid == 0 {
		fmt.Fprintln(os.Stderr, "engineattack: -pid is required: the engine's process id")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	attacks := map[string]func(context.Context, *config) string{
		"tts": ttsAttack, "sockets": socketAttack, "sessions": sessionAttack, "metrics": metricsAttack, "headers": headerAttack,
	}
	names := []string{"tts", "sockets", "sessions", "metrics", "headers"}
	if *attack != "all" {
		if attacks[*attack] == nil {
			fmt.Fprintf(os.Stderr, "engineattack: no attack %q\n", *attack)
			os.Exit(2)
		}
		names = []string{*attack}
	}
	fmt.Printf("| attack | engine RSS before / max / after | child processes (their RSS) before / max / after | a user's turn during: slowest (statuses) | outcome |\n|---|---|---|---|---|\n")
	for _, name := range names {
		if ctx.Err() != nil {
			return
		}
		runAttack(ctx, &c, name, attacks[name])
	}
}

// runAttack samples the engine before, during and after one attack.
func runAttack(ctx context.Context, c *config, name string, attack func(context.Context, *config) string) {
	settle(c)
	before := sample(c.pid)
	var (
		mu       sync.Mutex
		worst    = before
		slowest  time.Duration
		statuses = map[int]int{}
	)
	actx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { // the engine, and a user's turn, every 250 ms
		for i := 0; actx.Err() == nil; i++ {
			s := sample(c.pid)
			took, status := userTurn(actx, c, i)
			mu.Lock()
			worst.rss = max(worst.rss, s.rss)
			worst.children = max(worst.children, s.children)
			worst.childRSS = max(worst.childRSS, s.childRSS)
			if actx.Err() == nil {
				slowest = max(slowest, took)
				statuses[status]++
			}
			mu.Unlock()
			select {
			case <-actx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	})
	outcome := attack(ctx, c)
	cancel()
	wg.Wait()
	settle(c)
	after := sample(c.pid)
	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("| %s | %s / %s / %s | %d (%s) / %d (%s) / %d (%s) | %s (%s) | %s |\n", name, mib(before.rss), mib(worst.rss), mib(after.rss),
		before.children, mib(before.childRSS), worst.children, mib(worst.childRSS), after.children, mib(after.childRSS),
		slowest.Round(time.Millisecond), statusList(statuses), outcome)
}

// settle lets the engine end what the last attack left (sockets closing, syntheses stopping).
func settle(c *config) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && sample(c.pid).children > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
}

// userTurn is what a normal user does meanwhile: one typed turn.
func userTurn(ctx context.Context, c *config, i int) (time.Duration, int) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.target+"/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
	setHeaders(req.Header, c, "user-"+strconv.Itoa(i%50))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return time.Since(start), 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start), resp.StatusCode
}

func setHeaders(h http.Header, c *config, user string) {
	h.Set("X-Engine-Key", c.key)
	h.Set("X-Token", user)
	h.Set("X-Request-ID", "prod-attack-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	h.Set("Content-Type", "application/json")
}

// ttsAttack holds -n syntheses with clients that read the first bytes and then nothing.
func ttsAttack(ctx context.Context, c *config) string {
	u, _ := url.Parse(c.target)
	body := `{"text":"` + strings.Repeat("This goes on and on without a pause. ", 100) + `"}`
	var ok, refused, failed atomic.Int32
	var wg sync.WaitGroup
	for i := range c.n {
		wg.Go(func() {
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				failed.Add(1)
				return
			}
			defer conn.Close()
			conn.(*net.TCPConn).SetReadBuffer(4096)
			h := http.Header{}
			setHeaders(h, c, "tts-attacker-"+strconv.Itoa(i))
			var req strings.Builder
			fmt.Fprintf(&req, "POST /engine/tts HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", u.Host, len(body))
			h.Write(&req)
			req.WriteString("\r\n" + body)
			io.WriteString(conn, req.String())
			head := make([]byte, 12)
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadFull(conn, head); err != nil {
				failed.Add(1)
				return
			}
			switch string(head[9:12]) {
			case "200":
				ok.Add(1)
			case "503":
				refused.Add(1)
			default:
				failed.Add(1)
			}
			select { // hold the connection without reading
			case <-ctx.Done():
			case <-time.After(c.hold):
			}
		})
	}
	wg.Wait()
	return fmt.Sprintf("%d syntheses started, %d refused 503, %d other", ok.Load(), refused.Load(), failed.Load())
}

// socketAttack opens -n sockets of distinct users, each sending 60 s of speech it never ends.
func socketAttack(ctx context.Context, c *config) string {
	ws := "ws" + strings.TrimPrefix(c.target, "http") + "/engine/stream"
	chunk := base64.StdEncoding.EncodeToString(make([]byte, 32000)) // 1 s of 16 kHz 16-bit audio
	msg := []byte(`{"type":"audio","chunk":"` + chunk + `"}`)
	var opened, upgradeRefused, audioRefused, failed atomic.Int32
	var wg sync.WaitGroup
	for i := range c.n {
		wg.Go(func() {
			h := http.Header{}
			setHeaders(h, c, "socket-attacker-"+strconv.Itoa(i))
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			conn, resp, err := websocket.Dial(dctx, ws, &websocket.DialOptions{HTTPHeader: h})
			cancel()
			if err != nil {
				if resp != nil && (resp.StatusCode == 503 || resp.StatusCode == 429) {
					upgradeRefused.Add(1)
				} else {
					failed.Add(1)
				}
				return
			}
			defer conn.CloseNow()
			opened.Add(1)
			refusedOnce := false
			rctx, stopReading := context.WithCancel(ctx)
			defer stopReading()
			go func() {
				for {
					_, b, err := conn.Read(rctx)
					if err != nil {
						return
					}
					if strings.Contains(string(b), `"overloaded"`) && !refusedOnce {
						refusedOnce = true
						audioRefused.Add(1)
					}
				}
			}()
			for range 60 {
				if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
					return
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(c.hold):
			}
		})
	}
	wg.Wait()
	return fmt.Sprintf("%d sockets opened, %d upgrades refused, %d utterances refused as overloaded, %d other", opened.Load(), upgradeRefused.Load(), audioRefused.Load(), failed.Load())
}

// sessionAttack creates -n sessions with 8 KiB of metadata each, for distinct users.
func sessionAttack(ctx context.Context, c *config) string {
	body := `{"metadata":{"pad":"` + strings.Repeat("x", 8100) + `"}}`
	return "create-session: " + statusList(fire(ctx, c.sessions, func(i int) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.target+"/api/v1/create-session", strings.NewReader(body))
		setHeaders(req.Header, c, "session-attacker-"+strconv.Itoa(i%1000))
		return req
	}))
}

// metricsAttack asks for -n paths of 60 KB, then scrapes the metrics once.
func metricsAttack(ctx context.Context, c *config) string {
	statuses := fire(ctx, c.n, func(i int) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.target+"/"+strconv.Itoa(i)+strings.Repeat("a", 60_000), nil)
		return req
	})
	size := "no metrics"
	if c.metrics == "" {
		size = "no scrape (-metrics names no URL)"
	} else if resp, err := http.Get(c.metrics); err == nil {
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			size = fmt.Sprintf("a scrape is %.1f KB", float64(n)/1000)
		}
	}
	return "long paths: " + statusList(statuses) + "; " + size
}

// fire sends the n requests build makes, 32 at a time, and counts their statuses (0: failed).
func fire(ctx context.Context, n int, build func(i int) *http.Request) map[int]int {
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			status := 0
			if resp, err := http.DefaultClient.Do(build(i)); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return statuses
}

// headerAttack sends forwarded headers past the engine's bounds, then a header block past the
// server's.
func headerAttack(ctx context.Context, c *config) string {
	send := func(n, size int) string {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.target+"/engine", strings.NewReader(`{"transcript":"what is my balance"}`))
		setHeaders(req.Header, c, "header-attacker")
		for i := range n {
			req.Header.Set(fmt.Sprintf("X-Engine-Forward-X-Pad-%03d", i), strings.Repeat("v", size))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return "70 × 1 KB forwarded: " + send(70, 1000) + "; 1.2 MB of headers: " + send(40, 30_000)
}

// engineSample is what /proc says of the engine.
type engineSample struct {
	rss      int64 // bytes
	children int
	childRSS int64 // bytes, of all children together
}

func sample(pid int) engineSample {
	s := engineSample{rss: rss(strconv.Itoa(pid))}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			s.children++
			s.childRSS += rss(e.Name())
		}
	}
	return s
}

// rss is the resident memory of a process, from /proc/<pid>/status.
func rss(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func statusList(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		name := strconv.Itoa(k)
		if k == 0 {
			name = "failed"
		}
		parts = append(parts, fmt.Sprintf("%d× %s", m[k], name))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
