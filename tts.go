package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"unicode/utf8"

	"github.com/convengine/engine/internal/body"
	"github.com/convengine/engine/internal/response"
)

// TTSHandler returns the handler of POST /engine/tts: the text of the body spoken in the
// request's voice, else the tenant's, streamed as audio/wav while it is synthesized.
func (e *Engine) TTSHandler() http.Handler {
	return e.route(http.MethodPost, PathTTS, http.HandlerFunc(e.serveTTS))
}

func (e *Engine) serveTTS(w http.ResponseWriter, r *http.Request) {
	start := e.now()
	var b body.Speech
	req, admission := e.readRequest(w, r, WorkSynthesis, &b)
	if req == nil {
		return
	}
	// The synthesis stops when the response does: when the client goes, or a write waits past
	// the write timeout for a client that does not read.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	speech, voice, p := e.synthesize(ctx, req, admission, &b)
	if p != nil {
		writeProblem(w, p, req.ID)
		return
	}
	defer speech.PCM.Close()

	h := w.Header()
	h.Set("Content-Type", "audio/wav")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	n, werr, err := response.WriteWAV(w, speech.PCM, speech.SampleRate, e.writeTimeout)
	cancel()
	e.log.InfoContext(r.Context(), "tts", "requestId", req.ID, "tenant", req.Tenant.Key, "voice", voice,
		"chars", utf8.RuneCountInString(*b.Text), "bytes", n, "clientGone", r.Context().Err() != nil,
		"clientTooSlow", errors.Is(werr, os.ErrDeadlineExceeded), "ms", float64(e.now().Sub(start).Microseconds())/1000)
	if err != nil && werr == nil && r.Context().Err() == nil {
		// The header promised audio of unknown length: a clean end would pass a cut-off
		// answer for a whole one, so the response is aborted instead.
		e.log.WarnContext(r.Context(), "speech synthesis failed while streaming", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// synthesize checks the text and the voice of b as the tts endpoint takes them, and starts
// speaking the text in the voice chosen for it, which it returns. The audio holds the slots of
// the synthesis's admission a (one of the engine's, one of its user's) until its PCM is
// closed; a problem releases them.
func (e *Engine) synthesize(ctx context.Context, req *request, a *Admission, b *body.Speech) (*Audio, string, *Problem) {
	speech, chosen, p := e.startSynthesis(ctx, req, a, b)
	if p != nil {
		a.Release()
	}
	return speech, chosen, p
}

func (e *Engine) startSynthesis(ctx context.Context, req *request, a *Admission, b *body.Speech) (*Audio, string, *Problem) {
	requested, bad := b.Check()
	switch {
	case bad != nil:
		return nil, "", fieldProblem(bad)
	case e.synthesizer == nil:
		return nil, "", newProblem(http.StatusServiceUnavailable, CodeSynthesizerUnavailable, "this engine has no speech synthesis")
	}
	chosen := e.voiceFor(req.Tenant, requested, req.Tenant.Locale)
	start, said, ev := e.now(), e.speechText(*b.Text, req.Tenant.Locale), e.speechEvent(req)
	if p := a.reserve(ctx, synthesisSpend(req.Tenant, said)); p != nil {
		return nil, "", p
	}
	speech, err := e.synthesizer.Synthesize(context.WithValue(ctx, speechEventKey{}, &ev), said, chosen)
	speech = e.meterSynthesis(ctx, ev, a.budget, req.Tenant, said, start, speech, err)
	switch {
	case errors.Is(err, ErrUnknownVoice):
		return nil, "", newProblem(http.StatusBadRequest, CodeUnknownVoice, fmt.Sprintf("there is no voice %q", response.Truncate(chosen, 100)))
	case err != nil:
		e.log.WarnContext(ctx, "speech synthesis failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return nil, "", newProblem(http.StatusServiceUnavailable, CodeSynthesizerUnavailable, "the speech could not be synthesized; try again")
	}
	return &Audio{SampleRate: speech.SampleRate, PCM: response.OnClose(speech.PCM, a.Release)}, chosen, nil
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

// Speaker speaks a turn's answer sentence by sentence, for a transport that speaks while the
// answer is being written (package voice, a telephony bridge): in the tenant's voice for the
// turn's locale, each sentence written as words first (Config.SpeechText). Unlike
// [Engine.Synthesize] it takes no synthesis slot: the transport bounds its own speech, one
// sentence at a time per connection.
type Speaker struct {
	e      *Engine
	tenant *Tenant
	ev     SpeechEvent // whose speech it is, for the Observer
	voice  string
	locale string
	synth  Synthesizer // the answer's stream ([StreamingSynthesizer]), else the engine's synthesizer
}

// Speaker returns the speaker of c's turns in locale (the Locale of the turn's start event),
// or nil when the engine has no synthesizer or c's tenant cannot be found.
func (e *Engine) Speaker(ctx context.Context, c *Caller, locale string) *Speaker {
	if e.synthesizer == nil || c == nil {
		return nil
	}
	t, err := e.tenant(ctx, c.EngineKey, c.RequestID)
	if err != nil {
		return nil
	}
	locale = cmp.Or(locale, t.Locale)
	ev := SpeechEvent{RequestID: c.RequestID, Tenant: t.Key, Environment: cmp.Or(c.Environment, EnvProduction), SessionID: c.SessionID, User: e.UserKey(c)}
	s := &Speaker{e: e, tenant: t, ev: ev, voice: e.voiceFor(t, "", locale), locale: locale, synth: e.synthesizer}
	if ss, ok := e.synthesizer.(StreamingSynthesizer); ok {
		s.synth = ss.Stream(context.WithValue(ctx, speechEventKey{}, &ev), s.voice)
	}
	return s
}

// Voice is the synthesizer's voice the speaker speaks in; "" is the synthesizer's default.
func (s *Speaker) Voice() string { return s.voice }

// Say starts speaking sentence; the caller reads the audio as it comes and closes its PCM.
// Cancelling ctx stops the synthesis. Over the tenant's speech budget, the error is the 429
// quota_exceeded *Problem.
func (s *Speaker) Say(ctx context.Context, sentence string) (*Audio, error) {
	start, said, ev := s.e.now(), s.e.speechText(sentence, s.locale), s.ev
	budget, p := s.e.reserve(ctx, s.ev.RequestID, synthesisSpend(s.tenant, said))
	if p != nil {
		return nil, p
	}
	speech, err := s.synth.Synthesize(context.WithValue(ctx, speechEventKey{}, &ev), said, s.voice)
	return s.e.meterSynthesis(ctx, ev, budget, s.tenant, said, start, speech, err), err
}

// synthesisSpend is the most a synthesis of text may speak: a character a tenth of a second,
// slower than any voice reads, and a second more.
func synthesisSpend(t *Tenant, text string) Spend {
	return Spend{Tenant: t, SpeechSeconds: float64(utf8.RuneCountInString(text))/10 + 1}
}
