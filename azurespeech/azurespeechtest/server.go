// Package azurespeechtest is a stand-in for Azure AI Speech's REST APIs, built from the
// requests and answers Microsoft documents, for the tests and benchmarks of what uses package
// azurespeech: speech to text for short audio (POST
// /speech/recognition/conversation/cognitiveservices/v1?language=…&format=simple|detailed, a
// 16 kHz PCM WAV body, answered with RecognitionStatus and DisplayText or NBest), text to speech
// (POST /cognitiveservices/v1, SSML in, X-Microsoft-OutputFormat raw-16khz-16bit-mono-pcm or
// riff-16khz-16bit-mono-pcm out) and the token exchange (POST /sts/v1.0/issueToken). It answers
// after the latencies it is given and plays the faults of a provider.
//
// The shapes follow learn.microsoft.com /azure/ai-services/speech-service
// /rest-speech-to-text-short (its sample answers, simple and detailed; the statuses 200, 400,
// 401, 403), /rest-text-to-speech (the headers, the SSML, the statuses 400, 401, 415, 429, 502)
// and the JavaScript SDK's service messages (microsoft/cognitive-services-speech-sdk-js
// src/common.speech/ServiceMessages: DetailedSpeechPhrase.ts with NBest's Confidence, Lexical,
// ITN, MaskedITN and Display; Enums.ts's RecognitionStatus values).
package azurespeechtest

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/cloudspeech"
)

// Fault is a misbehaviour of the stand-in.
type Fault int

// Faults.
const (
	None Fault = iota
	// Status answers every request with Server.Status.
	Status
	// Stall accepts the request and answers nothing.
	Stall
	// Long answers past any bound: a recognition of 2 MiB, audio without end.
	Long
)

// Server is the stand-in. Set its fields before the first request.
type Server struct {
	*httptest.Server
	// Key is the resource key it accepts, in Ocp-Apim-Subscription-Key or exchanged for a token.
	Key string
	// Hear returns what was said in pcm (16 kHz); nil hears "what is my balance".
	Hear func(pcm []int16) string
	// RecognitionStatus, when set, is the status of every recognition (NoMatch,
	// InitialSilenceTimeout, BabbleTimeout, Error).
	RecognitionStatus string
	// Voices are the voice names it has; others are 400. Empty: any.
	Voices []string
	// Latency is how long it takes to answer a recognition, or to send a synthesis's first
	// audio.
	Latency time.Duration
	Fault   Fault
	Status  int

	mu       sync.Mutex
	requests []Request
	closing  chan struct{}
	once     sync.Once
}

// Request is what the stand-in was asked: the path, the query's language, the voice and text of
// a synthesis, and whether a token authorized it.
type Request struct {
	Path, Language, Voice, Locale, Text string
	Token                               bool
}

// New starts a stand-in that accepts key.
func New(key string) *Server {
	s := &Server{Key: key, closing: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close ends the stalled requests, then the server.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closing) })
	s.Server.Close()
}

// Requests returns the requests so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

const token = "eyJhbGciOiJFUzI1NiJ9.stand-in-token.c2ln"

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/sts/v1.0/issueToken" {
		if r.Header.Get("Ocp-Apim-Subscription-Key") != s.Key {
			s.denied(w)
			return
		}
		io.WriteString(w, token)
		return
	}
	bearer := r.Header.Get("Authorization") == "Bearer "+token
	switch {
	case r.Header.Get("Ocp-Apim-Subscription-Key") != s.Key && !bearer:
		s.denied(w)
		return
	case s.Fault == Status:
		w.WriteHeader(s.Status)
		return
	case s.Fault == Stall:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	switch r.URL.Path {
	case "/speech/recognition/conversation/cognitiveservices/v1":
		s.recognize(w, r, bearer)
	case "/cognitiveservices/v1":
		s.synthesize(w, r, bearer)
	default:
		http.NotFound(w, r)
	}
}

// denied is the answer to a wrong key: 401 with Azure's access-denied body.
func (s *Server) denied(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`)
}

func (s *Server) wait(r *http.Request) bool {
	select {
	case <-time.After(s.Latency):
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Server) recognize(w http.ResponseWriter, r *http.Request, bearer bool) {
	q := r.URL.Query()
	lang, format := q.Get("language"), q.Get("format")
	if lang == "" || (format != "" && format != "simple" && format != "detailed") {
		w.WriteHeader(http.StatusBadRequest) // "Language code not provided" (the documented 400)
		return
	}
	if r.Header.Get("Content-Type") != "audio/wav; codecs=audio/pcm; samplerate=16000" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return
	}
	pcm, err := audio.DecodeWAV(body, 16000, 60)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest) // "the audio is not of a documented format"
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Language: lang, Token: bearer})
	s.mu.Unlock()
	if !s.wait(r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if s.Fault == Long {
		w.Write([]byte(`{"RecognitionStatus":"Success","DisplayText":"`))
		w.Write([]byte(strings.Repeat("a", 2<<20)))
		return
	}
	text := "what is my balance"
	if s.Hear != nil {
		text = s.Hear(pcm)
	}
	ticks := int64(len(pcm)) * 10_000_000 / 16000 // Offset and Duration are in 100 ns
	answer := map[string]any{"RecognitionStatus": "Success", "Offset": 1_000_000, "Duration": ticks}
	if s.RecognitionStatus != "" {
		answer["RecognitionStatus"] = s.RecognitionStatus
		if s.RecognitionStatus != "Success" {
			text = ""
		}
	}
	if format == "detailed" {
		answer["NBest"] = []map[string]any{{"Confidence": 0.93, "Lexical": strings.ToLower(text), "ITN": strings.ToLower(text),
			"MaskedITN": strings.ToLower(text), "Display": text}}
		answer["DisplayText"] = text
	} else {
		answer["DisplayText"] = text
	}
	json.NewEncoder(w).Encode(answer)
}

// ssml is the part of the SSML the stand-in reads.
type ssml struct {
	Lang  string `xml:"lang,attr"`
	Voice struct {
		Name string `xml:"name,attr"`
		Text string `xml:",chardata"`
	} `xml:"voice"`
}

func (s *Server) synthesize(w http.ResponseWriter, r *http.Request, bearer bool) {
	format := r.Header.Get("X-Microsoft-OutputFormat")
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/ssml+xml") {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	var doc ssml
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if xml.Unmarshal(body, &doc) != nil || doc.Voice.Name == "" || (format != "raw-16khz-16bit-mono-pcm" && format != "riff-16khz-16bit-mono-pcm") {
		w.WriteHeader(http.StatusBadRequest) // "a required parameter is missing, empty, or null"
		return
	}
	if len(s.Voices) > 0 && !slices.Contains(s.Voices, doc.Voice.Name) {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Voice: doc.Voice.Name, Locale: doc.Lang, Text: doc.Voice.Text, Token: bearer})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "audio/x-wav")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if !s.wait(r) {
		return
	}
	pcm := Tone(utf8.RuneCountInString(doc.Voice.Text))
	if format == "riff-16khz-16bit-mono-pcm" {
		pcm = append(audio.AppendWAVHeader(nil, 16000, int64(len(pcm))), pcm...)
	}
	for i := 0; len(pcm) > 0 || s.Fault == Long; i++ {
		chunk := Tone(2)
		if len(pcm) > 0 {
			n := min(len(pcm), 3200)
			chunk, pcm = pcm[:n], pcm[n:]
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// Tone is the audio the stand-in speaks for chars characters: 50 ms of a 330 Hz tone each, as
// 16 kHz 16-bit little-endian PCM.
func Tone(chars int) []byte { return cloudspeech.Tone(chars, 330) }
