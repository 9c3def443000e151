package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"
)

// replica is one reference server of the deployment, on a port of its own that it keeps across
// restarts, so that the balancer's configuration names it for the whole drill.
type replica struct {
	name, addr, bin, dir string
	args                 []string
	env                  []string
	cmd                  *exec.Cmd
	exited               chan error
	restarts             int
}

// start starts the replica and waits until it is ready (GET /readyz answers 200).
func (r *replica) start(ctx context.Context) error {
	logf, err := os.OpenFile(filepath.Join(r.dir, r.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	r.cmd = exec.Command(r.bin, append([]string{"-addr", r.addr}, r.args...)...)
	r.cmd.Env = append(os.Environ(), r.env...)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", r.name, err)
	}
	r.exited = make(chan error, 1)
	go func(cmd *exec.Cmd, exited chan<- error) { exited <- cmd.Wait() }(r.cmd, r.exited)
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-r.exited:
			r.exited <- err
			return fmt.Errorf("%s exited at start: %v (its log: %s)", r.name, err, logf.Name())
		default:
		}
		if ready(ctx, "http://"+r.addr+"/readyz") {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.kill()
			return fmt.Errorf("%s is not ready after 30 s (its log: %s)", r.name, logf.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the replica with SIGKILL, as a crash or an OOM kill would, and waits for it.
func (r *replica) kill() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	<-r.exited
	r.cmd = nil
}

// term sends the replica SIGTERM, as an orchestrator draining it would, and waits for it to
// exit: how long it took and whether it exited cleanly.
func (r *replica) term(limit time.Duration) (time.Duration, error) {
	start := time.Now()
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-r.exited:
		r.cmd = nil
		return time.Since(start), err
	case <-time.After(limit):
		r.kill()
		return time.Since(start), fmt.Errorf("%s had not exited %v after SIGTERM: killed", r.name, limit)
	}
}

// ready reports whether url answers 200.
func ready(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// haproxyConfig is the balancer's configuration as docs/scaling.md ships it: health checks on
// /readyz every half second (a replica is out after two failures, in after two passes), L7
// retries on another replica of a request that found no connection, an empty answer or 503
// (a replica draining refuses new turns with 503 shutting_down), and long time-outs for event
// streams and voice sockets. A replica that is marked down keeps the streams it serves: no
// on-marked-down shutdown-sessions, or a drain would cut the turns it is finishing.
var haproxyConfig = template.Must(template.New("haproxy").Parse(`global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 5m
    timeout server 5m
    timeout tunnel 1h
    timeout http-request 10s
    option http-buffer-request
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response 503

frontend engine
    bind {{.Addr}}
    default_backend replicas

backend replicas
    balance leastconn
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2
    http-response set-header X-Replica %[srv_name]
{{- range .Replicas}}
    server {{.Name}} {{.Addr}} check
{{- end}}
`))

// balancer is HAProxy in front of the replicas.
type balancer struct {
	addr   string
	cmd    *exec.Cmd
	exited chan error
}

// startBalancer writes the configuration and starts haproxy in the foreground, and waits until
// it sends a request through to a replica.
func startBalancer(ctx context.Context, dir string, replicas []*replica) (*balancer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	type server struct{ Name, Addr string }
	data := struct {
		Addr     string
		Replicas []server
	}{Addr: addr}
	for _, r := range replicas {
		data.Replicas = append(data.Replicas, server{r.name, r.addr})
	}
	var cfg strings.Builder
	if err := haproxyConfig.Execute(&cfg, data); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "haproxy.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	b := &balancer{addr: addr, cmd: exec.Command("haproxy", "-db", "-f", path), exited: make(chan error, 1)}
	b.cmd.Stdout, b.cmd.Stderr = logf, logf
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting haproxy: %w", err)
	}
	go func() { b.exited <- b.cmd.Wait() }()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-b.exited:
			log, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("haproxy exited at start: %v\n%s", err, log)
		default:
		}
		if ready(ctx, "http://"+addr+"/readyz") {
			return b, nil
		}
		if time.Now().After(deadline) {
			b.stop()
			return nil, errors.New("haproxy does not pass requests after 15 s")
		}
	}
}

func (b *balancer) stop() {
	b.cmd.Process.Kill()
	<-b.exited
}

// newReplicas returns n replicas of bin on free ports, not started.
func newReplicas(n int, bin, dir string, args, env []string) ([]*replica, error) {
	var rs []*replica
	for i := range n {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		rs = append(rs, &replica{name: "r" + strconv.Itoa(i+1), addr: addr, bin: bin, dir: dir, args: args, env: env})
	}
	return rs, nil
}
