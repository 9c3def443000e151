// Package deepgramtest is a stand-in for Deepgram's speech-to-text API, built from the messages
// Deepgram documents, for the tests and benchmarks of what uses package deepgram: the live API
// (WebSocket /v1/listen: Results with is_final, speech_final and from_finalize, UtteranceEnd,
// Metadata; KeepAlive, Finalize and CloseStream from the client) and the pre-recorded API
// (POST /v1/listen). It answers with what Hear makes of the audio, after the latencies it is
// given, and plays the faults a real provider has.
//
// The messages follow developers.deepgram.com (/reference/speech-to-text/listen-streaming,
// /docs/understand-endpointing-interim-results, /docs/utterance-end, /docs/finalize) and the
// Results type of its SDKs (@deepgram/sdk LiveTranscriptionEvent; deepgram/deepgram-go-sdk
// pkg/api/listen/v1/websocket/interfaces MessageResponse).
package deepgramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine/audio"
)

// Fault is a misbehaviour of the stand-in.
type Fault int

// Faults.
const (
	// None answers as Deepgram does.
	None Fault = iota
	// CloseMidUtterance closes the live connection with 1011 once audio came.
	CloseMidUtterance
	// OutOfOrder sends the final results of an utterance last word first.
	OutOfOrder
	// NoFinal sends interim results only, and ignores Finalize and CloseStream.
	NoFinal
	// Stall accepts the connection and sends nothing.
	Stall
	// Status answers every request, and the upgrade, with Server.Status.
	Status
)

// Server is the stand-in. Set its fields before the first request.
type Server struct {
	*httptest.Server
	// Key is the API key it accepts: others are 401 INVALID_AUTH.
	Key string
	// Hear returns what was said in pcm (16-bit mono at rate); nil hears "what is my balance".
	Hear func(pcm []int16, rate int) string
	// Endpointing, when set, is the pause after speech at which a live connection sends the
	// utterance's final results with speech_final, unasked, as Deepgram's endpointing does
	// (the live request's endpointing= parameter); 0 sends finals only after Finalize.
	Endpointing time.Duration
	// FinalLatency is how long after Finalize the final result comes; PrerecordedLatency how
	// long a pre-recorded request takes to answer.
	FinalLatency, PrerecordedLatency time.Duration
	Fault                            Fault
	Status                           int

	mu       sync.Mutex
	queries  []string
	open     int // live connections open
	maxLive  int // the most open at once
	conns    sync.WaitGroup
	closing  chan struct{}
	closeOne sync.Once
}

// New starts a stand-in that accepts key.
func New(key string) *Server {
	s := &Server{Key: key, closing: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close ends the live connections, then the server.
func (s *Server) Close() {
	s.closeOne.Do(func() { close(s.closing) })
	s.conns.Wait()
	s.Server.Close()
}

// Queries returns the query strings of the requests so far (live and pre-recorded).
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// Live returns the live connections open now.
func (s *Server) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// MaxLive returns the most live connections that were open at once.
func (s *Server) MaxLive() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxLive
}

func (s *Server) hear(pcm []int16, rate int) string {
	if s.Hear == nil {
		return "what is my balance"
	}
	return s.Hear(pcm, rate)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.queries = append(s.queries, r.URL.RawQuery)
	s.mu.Unlock()
	switch {
	case r.URL.Path != "/v1/listen":
		http.NotFound(w, r)
		return
	case r.Header.Get("Authorization") != "Token "+s.Key:
		w.Header().Set("dg-error", "Invalid credentials.")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials.","request_id":"8e5c1a2b-0000-4000-8000-000000000000"}`)
		return
	case s.Fault == Status:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(s.Status)
		fmt.Fprintf(w, `{"err_code":"%s","err_msg":"stand-in fault"}`, map[bool]string{true: "TOO_MANY_REQUESTS", false: "INTERNAL_SERVER_ERROR"}[s.Status == 429])
		return
	}
	q := r.URL.Query()
	rate, err := strconv.Atoi(q.Get("sample_rate"))
	if q.Get("encoding") != "linear16" || err != nil || rate < 8000 || rate > 48000 {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"err_code":"Bad Request","err_msg":"encoding and sample_rate are required for raw audio"}`)
		return
	}
	if r.Method == http.MethodPost {
		s.prerecorded(w, r, rate)
		return
	}
	s.conns.Add(1)
	defer s.conns.Done()
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.open++
	s.maxLive = max(s.maxLive, s.open)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.open--
		s.mu.Unlock()
	}()
	defer conn.CloseNow()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			conn.CloseNow()
		case <-ctx.Done():
		}
	}()
	s.live(ctx, conn, rate)
}

// result is a Results message as Deepgram sends it.
func result(text string, start, duration float64, isFinal, speechFinal, fromFinalize bool) []byte {
	words := []map[string]any{}
	for i, w := range strings.Fields(text) {
		words = append(words, map[string]any{"word": strings.ToLower(w), "start": start + float64(i)*0.3, "end": start + float64(i)*0.3 + 0.25,
			"confidence": 0.98, "punctuated_word": w})
	}
	b, _ := json.Marshal(map[string]any{
		"type": "Results", "channel_index": []int{0, 1}, "duration": duration, "start": start,
		"is_final": isFinal, "speech_final": speechFinal, "from_finalize": fromFinalize,
		"channel": map[string]any{"alternatives": []map[string]any{{"transcript": text, "confidence": 0.98, "words": words}}},
		"metadata": map[string]any{"request_id": "5b7e3c1a-0000-4000-8000-000000000000",
			"model_info": map[string]any{"name": "2-general-nova", "version": "2024-01-18.26916", "arch": "nova-3"},
			"model_uuid": "1abfe86b-e047-4eed-858a-35e5625b41ee"},
	})
	return b
}

func (s *Server) live(ctx context.Context, conn *websocket.Conn, rate int) {
	conn.SetReadLimit(1 << 20)
	write := func(b []byte) bool {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return conn.Write(wctx, websocket.MessageText, b) == nil
	}
	var pcm []int16
	sentInterim, endpointed := 0, false
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if s.Fault == Stall {
			continue
		}
		if typ == websocket.MessageBinary {
			pcm = audio.AppendSamples(pcm, data)
			if s.Fault == CloseMidUtterance {
				conn.Close(websocket.StatusInternalError, "NET-0000")
				return
			}
			if s.Endpointing > 0 && !endpointed && paused(pcm, rate, s.Endpointing) {
				endpointed = true
				if !s.finals(write, s.hear(pcm, rate), float64(len(pcm))/float64(rate)) {
					return
				}
				continue
			}
			// An interim result for each half second of audio.
			if len(pcm)/(rate/2) > sentInterim {
				sentInterim = len(pcm) / (rate / 2)
				if !write(result(s.hear(pcm, rate), 0, float64(len(pcm))/float64(rate), false, false, false)) {
					return
				}
			}
			continue
		}
		var m struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(data, &m) != nil {
			conn.Close(websocket.StatusPolicyViolation, "DATA-0000")
			return
		}
		if s.Fault == NoFinal {
			continue
		}
		switch m.Type {
		case "KeepAlive":
		case "Finalize":
			select {
			case <-time.After(s.FinalLatency):
			case <-ctx.Done():
				return
			}
			if !s.finals(write, s.hear(pcm, rate), float64(len(pcm))/float64(rate)) {
				return
			}
		case "CloseStream":
			b, _ := json.Marshal(map[string]any{"type": "Metadata", "transaction_key": "deprecated",
				"request_id": "5b7e3c1a-0000-4000-8000-000000000000", "sha256": "", "created": time.Now().UTC().Format(time.RFC3339),
				"duration": float64(len(pcm)) / float64(rate), "channels": 1})
			write(b)
			conn.Close(websocket.StatusNormalClosure, "")
			return
		}
	}
}

// paused reports whether pcm holds speech followed by a pause of at least d: its last d of
// samples are quiet, and louder ones come before.
func paused(pcm []int16, rate int, d time.Duration) bool {
	tail := int(d.Seconds() * float64(rate))
	if len(pcm) <= tail {
		return false
	}
	loud := func(s []int16) bool {
		for _, v := range s {
			if v > 2000 || v < -2000 {
				return true
			}
		}
		return false
	}
	return !loud(pcm[len(pcm)-tail:]) && loud(pcm[:len(pcm)-tail])
}

// finals sends the final results of an utterance: one per half of its words, then an
// UtteranceEnd; OutOfOrder sends the second half first.
func (s *Server) finals(write func([]byte) bool, text string, seconds float64) bool {
	words := strings.Fields(text)
	half := len(words) / 2
	first, second := strings.Join(words[:half], " "), strings.Join(words[half:], " ")
	msgs := [][]byte{result(first, 0, seconds/2, true, false, false), result(second, seconds/2, seconds/2, true, true, true)}
	if s.Fault == OutOfOrder {
		msgs[0], msgs[1] = result(second, seconds/2, seconds/2, true, false, false), result(first, 0, seconds/2, true, true, true)
	}
	if first == "" {
		msgs = msgs[1:]
	}
	for _, m := range msgs {
		if !write(m) {
			return false
		}
	}
	return write([]byte(fmt.Sprintf(`{"type":"UtteranceEnd","channel":[0,1],"last_word_end":%.2f}`, seconds)))
}

func (s *Server) prerecorded(w http.ResponseWriter, r *http.Request, rate int) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return
	}
	if s.Fault == Stall {
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	select {
	case <-time.After(s.PrerecordedLatency):
	case <-r.Context().Done():
		return
	}
	text := s.hear(audio.PCMFromBytes(body), rate)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"metadata": map[string]any{"request_id": "b6d5d0a4-0000-4000-8000-000000000000", "duration": float64(len(body)/2) / float64(rate), "channels": 1},
		"results":  map[string]any{"channels": []map[string]any{{"alternatives": []map[string]any{{"transcript": text, "confidence": 0.98}}}}},
	})
}
