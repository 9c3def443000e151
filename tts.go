package engine

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/convengine/engine/audio"
)

// maxSpeechText bounds the text of one tts request, in characters.
const maxSpeechText = 4000

// ttsRequest is the body of POST /engine/tts.
type ttsRequest struct {
	Text  *string `json:"text"`
	Voice *string `json:"voice"`
}

// TTSHandler returns the handler of POST /engine/tts: the text of the body spoken in the
// request's voice, else the tenant's, streamed as audio/wav while it is synthesized.
func (e *Engine) TTSHandler() http.Handler {
	return e.route(http.MethodPost, PathTTS, http.HandlerFunc(e.serveTTS))
}

func (e *Engine) serveTTS(w http.ResponseWriter, r *http.Request) {
	start := e.now()
	var body ttsRequest
	req := e.readRequest(w, r, &body)
	if req == nil {
		return
	}
	var p *Problem
	switch {
	case body.Text == nil:
		p = invalidField("text", "is required")
	case !utf8.ValidString(*body.Text) || utf8.RuneCountInString(*body.Text) > maxSpeechText:
		p = invalidField("text", fmt.Sprintf("must be valid UTF-8 of at most %d characters", maxSpeechText))
	case strings.TrimSpace(*body.Text) == "":
		p = invalidField("text", "has nothing to say")
	case body.Voice != nil && strings.TrimSpace(*body.Voice) == "":
		p = invalidField("voice", "is empty; leave it out for the tenant's voice")
	case e.synthesizer == nil:
		p = newProblem(http.StatusServiceUnavailable, CodeSynthesizerUnavailable, "this engine has no speech synthesis")
	}
	if p != nil {
		writeProblem(w, p, req.ID)
		return
	}
	requested := ""
	if body.Voice != nil {
		requested = strings.TrimSpace(*body.Voice)
	}
	voice := e.voiceFor(req.Tenant, requested, req.Tenant.Locale)
	synthStart := e.now()
	speech, err := e.synthesizer.Synthesize(r.Context(), *body.Text, voice)
	e.observeSpeech(r.Context(), "synthesis", req.Tenant.Key, synthStart, err)
	switch {
	case errors.Is(err, ErrUnknownVoice):
		writeProblem(w, newProblem(http.StatusBadRequest, CodeUnknownVoice, fmt.Sprintf("there is no voice %q", truncateText(voice, 100))), req.ID)
		return
	case err != nil:
		e.log.WarnContext(r.Context(), "speech synthesis failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		writeProblem(w, newProblem(http.StatusServiceUnavailable, CodeSynthesizerUnavailable, "the speech could not be synthesized; try again"), req.ID)
		return
	}
	defer speech.PCM.Close()

	h := w.Header()
	h.Set("Content-Type", "audio/wav")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	n, err := streamWAV(w, speech)
	e.log.InfoContext(r.Context(), "tts", "requestId", req.ID, "tenant", req.Tenant.Key, "voice", voice,
		"chars", utf8.RuneCountInString(*body.Text), "bytes", n, "clientGone", r.Context().Err() != nil,
		"ms", float64(e.now().Sub(start).Microseconds())/1000)
	if err != nil && r.Context().Err() == nil {
		// The header promised audio of unknown length: a clean end would pass a cut-off
		// answer for a whole one, so the response is aborted instead.
		e.log.WarnContext(r.Context(), "speech synthesis failed while streaming", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// streamWAV writes a streaming WAV header and then the samples as they come, flushing each
// read. It returns the bytes of samples written.
func streamWAV(w http.ResponseWriter, a *Audio) (int64, error) {
	rc := http.NewResponseController(w)
	if _, err := w.Write(audio.AppendWAVHeader(nil, a.SampleRate, -1)); err != nil {
		return 0, err
	}
	var n int64
	buf := make([]byte, 16<<10)
	for {
		m, rerr := a.PCM.Read(buf)
		if m > 0 {
			if _, err := w.Write(buf[:m]); err != nil {
				return n, err
			}
			n += int64(m)
			if err := rc.Flush(); err != nil {
				return n, err
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// voiceFor returns the voice to speak with: the one requested, else the tenant's, else the one
// the synthesizer prefers for locale, else "" for its default.
func (e *Engine) voiceFor(t *Tenant, requested, locale string) string {
	switch {
	case requested != "":
		return requested
	case t.Voice != "":
		return t.Voice
	}
	if vc, ok := e.synthesizer.(VoiceChooser); ok {
		return vc.VoiceFor(locale)
	}
	return ""
}

func truncateText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
