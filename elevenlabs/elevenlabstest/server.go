// Package elevenlabstest is a stand-in for ElevenLabs' streaming text-to-speech API (POST
// /v1/text-to-speech/{voice_id}/stream?output_format=pcm_16000, the key in xi-api-key) and its
// input-streaming WebSocket (GET /v1/text-to-speech/{voice_id}/stream-input), built from the
// requests and answers ElevenLabs documents (elevenlabs.io/docs /api-reference/text-to-speech
// /stream and /api-reference/text-to-speech/v-1-text-to-speech-voice-id-stream-input; error
// bodies {"detail":{"status":…,"message":…}}) and its Python SDK's client of the WebSocket
// (elevenlabs/elevenlabs-python src/elevenlabs/realtime_tts.py: a first message of text " ",
// chunks of text, the closing text "", messages of base64 audio until isFinal), for the tests
// and benchmarks of what uses package elevenlabs. It speaks a tone of 50 ms a character, after
// the first-byte latency it is given, and plays the faults of a provider.
package elevenlabstest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/convengine/engine/internal/cloudspeech"
)

// Fault is a misbehaviour of the stand-in.
type Fault int

// Faults.
const (
	None Fault = iota
	// Status answers every request with Server.Status.
	Status
	// Stall answers 200 and sends no audio.
	Stall
	// CutOff sends half the audio and breaks the connection.
	CutOff
)

// Server is the stand-in. Set its fields before the first request.
type Server struct {
	*httptest.Server
	Key string
	// Voices are the voice ids it has; others are 404 voice_not_found. Empty: any.
	Voices []string
	// MaxCharacters is the most text a request takes (eleven_flash_v2_5: 40 000); more is
	// 400 text_too_long.
	MaxCharacters int
	// FirstByte is how long it takes to send the first audio.
	FirstByte time.Duration
	Fault     Fault
	Status    int

	mu      sync.Mutex
	texts   []string
	streams int // input streams opened
}

// New starts a stand-in that accepts key.
func New(key string) *Server {
	s := &Server{Key: key, MaxCharacters: 40000}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Texts returns the texts it was asked to speak, in order.
func (s *Server) Texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...)
}

func detail(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"detail": map[string]string{"status": code, "message": message}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if v, ok := strings.CutSuffix(r.URL.Path, "/stream-input"); ok && strings.HasPrefix(v, "/v1/text-to-speech/") {
		s.streamInput(w, r, strings.TrimPrefix(v, "/v1/text-to-speech/"))
		return
	}
	voice, ok := strings.CutPrefix(r.URL.Path, "/v1/text-to-speech/")
	voice, ok2 := strings.CutSuffix(voice, "/stream")
	switch {
	case !ok || !ok2 || r.Method != http.MethodPost:
		http.NotFound(w, r)
		return
	case r.Header.Get("xi-api-key") != s.Key:
		detail(w, http.StatusUnauthorized, "invalid_api_key", "Invalid API key")
		return
	case s.Fault == Status:
		code := map[int]string{429: "too_many_concurrent_requests"}[s.Status]
		detail(w, s.Status, code, "stand-in fault")
		return
	case r.URL.Query().Get("output_format") != "pcm_16000":
		detail(w, http.StatusBadRequest, "invalid_output_format", "this stand-in speaks pcm_16000")
		return
	case len(s.Voices) > 0 && !slices.Contains(s.Voices, voice):
		detail(w, http.StatusNotFound, "voice_not_found", "A voice with the voice_id "+voice+" was not found.")
		return
	}
	var body struct {
		Text    string `json:"text"`
		ModelID string `json:"model_id"`
	}
	if json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body) != nil || strings.TrimSpace(body.Text) == "" {
		detail(w, http.StatusUnprocessableEntity, "invalid_request", "text is required")
		return
	}
	if n := utf8.RuneCountInString(body.Text); n > s.MaxCharacters {
		detail(w, http.StatusBadRequest, "text_too_long", fmt.Sprintf("text of %d characters is over the model's %d", n, s.MaxCharacters))
		return
	}
	s.mu.Lock()
	s.texts = append(s.texts, body.Text)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "audio/pcm")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if s.Fault == Stall {
		<-r.Context().Done()
		return
	}
	select {
	case <-time.After(s.FirstByte):
	case <-r.Context().Done():
		return
	}
	pcm := Tone(utf8.RuneCountInString(body.Text))
	if s.Fault == CutOff {
		w.Write(pcm[:len(pcm)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	for len(pcm) > 0 { // in chunks of 0.1 s, as they are made
		n := min(len(pcm), 3200)
		if _, err := w.Write(pcm[:n]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		pcm = pcm[n:]
	}
}

// Tone is the audio the stand-in speaks for chars characters: 50 ms of a 220 Hz tone each, as
// 16 kHz 16-bit little-endian PCM.
func Tone(chars int) []byte { return cloudspeech.Tone(chars, 220) }
