package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
)

// replicaCut sends turns to replica A and cuts the first one's stream after its first speak
// event, then sends what follows (the resume) to replica B, as a load balancer may after the
// client's network changed.
type replicaCut struct {
	b   *url.URL
	cut bool
}

func (c *replicaCut) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, client.PathTurns) {
		r = r.Clone(r.Context())
		r.URL.Host, r.Host = c.b.Host, c.b.Host
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || r.URL.Path != client.PathTurn || c.cut {
		return resp, err
	}
	c.cut = true
	body, _ := io.ReadAll(resp.Body) // the whole first stream; only its start reaches the client
	resp.Body.Close()
	i := bytes.Index(body, []byte("event: speak\n"))
	j := bytes.Index(body[i:], []byte("\n\n"))
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:i+j+2]), errReader{}))
	return resp, nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// TestTwoReplicasResumeATurn: a turn run on replica A whose stream breaks after its first
// speak event is resumed by the Go client on replica B, both on one Redis: the answer is whole
// and the bank ran its tool once.
func TestTwoReplicasResumeATurn(t *testing.T) {
	redis := testkit.StartRedisT(t)
	backend := enginetest.NewBackend(demobank.New(nil))
	bank := httptest.NewServer(backend)
	defer bank.Close()
	path, env := replicas(t, bank.URL, redis.Addr)
	a, _ := startServer(t, []string{"-tenants", path}, env)
	b, _ := startServer(t, []string{"-tenants", path}, env)
	bURL, _ := url.Parse(b)

	tr := &replicaCut{b: bURL}
	c, err := client.New(a, &client.Options{EngineKey: demobank.EngineKey, UserToken: client.StaticToken("demo-user-token"),
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := c.Turn(t.Context(), &client.TurnRequest{Transcript: "what is my balance"})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	spec, err := stream.Spec()
	if err != nil || spec.Speak != "Your Everyday Checking balance is $1,234.56." || len(spec.Widgets) != 1 {
		t.Fatalf("spec %+v, %v", spec, err)
	}
	if !tr.cut {
		t.Fatal("the stream was not cut")
	}
	if n := len(backend.Received()); n != 1 {
		t.Errorf("the bank's log has %d calls, want one", n)
	}
}
