package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/convengine/engine/client"
)

// turnMode runs SSE turns (POST /engine). Through the client package by default: its event
// iterator hands over each event as it is dispatched, which times the first speak. With -raw,
// a plain request and a scanner that only looks at event names: the load tool's own cost per
// turn drops, which matters when it shares the machine with the server.
type turnMode struct{ cfg *config }

func (m *turnMode) describe() string { return "an SSE turn (POST /engine)" }

func (m *turnMode) worker(ctx context.Context, t *target, s slot) (worker, error) {
	body, err := json.Marshal(m.request())
	if err != nil {
		return nil, err
	}
	if m.cfg.raw {
		return &rawTurnWorker{cfg: m.cfg, t: t, body: body, w: s.index, br: bufio.NewReaderSize(nil, 16<<10)}, nil
	}
	c, err := m.cfg.newClient(t)
	if err != nil {
		return nil, err
	}
	if err := m.cfg.startSession(ctx, c); err != nil {
		return nil, err
	}
	return &turnWorker{c: c, req: m.request()}, nil
}

func (m *turnMode) request() *client.TurnRequest {
	return &client.TurnRequest{Transcript: m.cfg.say, Mode: m.cfg.turnMode}
}

// startSession creates the worker's session when -session or -bound asks for one.
func (c *config) startSession(ctx context.Context, cl *client.Client) error {
	if !c.session && !c.bound {
		return nil
	}
	if _, err := cl.CreateSession(ctx, &client.SessionOptions{Bind: c.bound}); err != nil {
		return fmt.Errorf("creating a session: %w", err)
	}
	return nil
}

type turnWorker struct {
	c   *client.Client
	req *client.TurnRequest
}

func (w *turnWorker) do(ctx context.Context, start time.Time) (sample, error) {
	stream, err := w.c.Turn(ctx, w.req)
	if err != nil {
		return sample{total: time.Since(start), code: errorCode(err)}, nil
	}
	defer stream.Close()
	var s sample
	for ev, err := range stream.Events() {
		if err != nil {
			s.code = errorCode(err)
			break
		}
		switch ev := ev.(type) {
		case *client.SpeakEvent:
			if s.first == 0 {
				s.first = time.Since(start)
			}
		case *client.ErrorEvent:
			if s.code == "" {
				s.code = ev.Code
			}
		case *client.DoneEvent:
			s.total = time.Since(start)
		}
	}
	if s.total == 0 {
		s.total = time.Since(start)
	}
	return s, nil
}

// rawTurnWorker runs turns without the client package: no sessions, no JSON decoding of
// events.
type rawTurnWorker struct {
	cfg  *config
	t    *target
	body []byte
	w    int
	seq  int
	br   *bufio.Reader
}

var (
	eventPrefix = []byte("event: ")
	dataPrefix  = []byte("data: ")
)

func (w *rawTurnWorker) do(ctx context.Context, start time.Time) (sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.t.url+client.PathTurn, bytes.NewReader(w.body))
	if err != nil {
		return sample{}, err
	}
	w.seq++
	prefix := "prod-"
	if w.cfg.staging {
		prefix = "stg-"
	}
	h := req.Header
	h["X-Engine-Key"] = []string{w.t.key}
	h["X-Token"] = []string{w.cfg.token}
	h["X-Request-Id"] = []string{prefix + "raw-" + strconv.Itoa(w.w) + "-" + strconv.Itoa(w.seq)}
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"text/event-stream"}
	resp, err := w.t.http.Do(req)
	if err != nil {
		return sample{total: time.Since(start), code: errorCode(err)}, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sample{total: time.Since(start), code: problemCode(resp)}, nil
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return sample{total: time.Since(start), code: "not_an_event_stream"}, nil
	}
	s, err := scanTurn(w.br, resp.Body, start)
	if err != nil {
		s.code = errorCode(err)
	}
	if s.total == 0 {
		s.total = time.Since(start)
	}
	return s, nil
}

// scanTurn reads a turn stream up to its done event, timing the first speak event and done,
// and noting the code of an error event. It reads event names and the data of error events
// only.
func scanTurn(br *bufio.Reader, body io.Reader, start time.Time) (sample, error) {
	br.Reset(body)
	defer br.Reset(nil)
	var (
		s    sample
		name []byte
		long bool // the line being read did not fit the buffer
		nbuf [16]byte
	)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = true
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = client.ErrIncompleteStream
			}
			return s, err
		}
		if long {
			long = false
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			switch string(name) {
			case "speak":
				if s.first == 0 {
					s.first = time.Since(start)
				}
			case "done":
				s.total = time.Since(start)
				io.Copy(io.Discard, br) // the end of the body lets the connection be reused
				return s, nil
			}
			name = name[:0]
		case bytes.HasPrefix(line, eventPrefix):
			name = append(nbuf[:0], line[len(eventPrefix):]...)
		case bytes.HasPrefix(line, dataPrefix) && string(name) == "error" && s.code == "":
			var ev struct {
				Code string `json:"code"`
			}
			if json.Unmarshal(line[len(dataPrefix):], &ev) == nil && ev.Code != "" {
				s.code = ev.Code
			} else {
				s.code = "error_event"
			}
		}
	}
}

// problemCode reads the code of a problem answer.
func problemCode(resp *http.Response) string {
	var p struct {
		Code string `json:"code"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(data, &p) == nil && p.Code != "" {
		return p.Code
	}
	return statusCode(resp.StatusCode)
}
