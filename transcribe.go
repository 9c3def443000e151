package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/audio/vad"
	"github.com/convengine/engine/internal/body"
)

// Audio input: 16 kHz mono 16-bit PCM, at most a minute of it per turn or utterance.
const (
	inputSampleRate = body.SampleRate
	maxInputSeconds = body.MaxAudioSeconds
)

// hear transcribes 16 kHz samples of req's user in locale, with the tenant's own vocabulary
// when the Transcriber can use it. Failures are problems; a cancelled ctx is returned as is
// for the caller to notice. Speech heard but not understood ([ErrNotUnderstood]) is "" and no
// problem. The transcription holds one of Config.MaxConcurrentTranscriptions and one of the
// user's Config.MaxTranscriptionsPerUser while it runs; without a free one, the problem is
// overloaded or rate_limited.
func (e *Engine) hear(ctx context.Context, req *request, pcm []int16, listening Listening, locale string) (string, *Problem) {
	if listening != nil {
		defer listening.Close()
	}
	if e.transcriber == nil {
		return "", newProblem(http.StatusServiceUnavailable, CodeTranscriberUnavailable, "this engine has no speech recognition; send a transcript")
	}
	// Only the speech goes to the transcriber, with a little silence around it: long silence
	// upsets recognisers (pocketsphinx refused a phrase with a second of it; free-form models
	// invent words in it), and audio without speech is no_speech without asking one.
	pcm = vad.Trim(pcm, nil)
	if pcm == nil {
		return "", newProblem(http.StatusUnprocessableEntity, CodeNoSpeech, "no speech was found in the audio")
	}
	// A user holds a few transcriptions at most, and the process a bounded number, running or
	// waiting for the transcriber: past them the audio is refused at once, rather than waiting
	// in a queue that delays everyone's turns past their deadlines. The audio is counted
	// against the speech budget before it is heard; and a tenant out of tokens, or a user out
	// of turns, has no audio transcribed for a turn that would be refused.
	var (
		text string
		err  error
	)
	seconds := float64(len(pcm)) / inputSampleRate
	spend := Spend{Tenant: req.Tenant, SpeechSeconds: seconds}
	if e.budget != nil {
		spend.User, spend.Tokens, spend.Turns = e.userOf(req), 1, 1
	}
	admission, p := e.admit(ctx, req, Work{Kind: WorkTranscription, spend: spend})
	if p != nil {
		return "", p
	}
	defer admission.Release()
	defer admission.settle(ctx, Spend{Tenant: req.Tenant, User: spend.User, SpeechSeconds: seconds})
	start, ev := e.now(), e.speechEvent(req)
	ctx = context.WithValue(ctx, speechEventKey{}, &ev)
	if listening != nil {
		// What was heard while it was spoken; the recording is transcribed when that failed.
		text, err = listening.Finish(ctx)
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrNotUnderstood) && !errors.Is(err, ErrUnsupportedLocale) {
			e.log.WarnContext(ctx, "streaming recognition failed; transcribing the recording", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
			listening = nil
		}
	}
	switch tt, ok := e.transcriber.(TenantTranscriber); {
	case listening != nil:
	case ok:
		text, err = tt.TranscribeFor(ctx, req.Tenant, pcm, inputSampleRate, locale)
	default:
		text, err = e.transcriber.Transcribe(ctx, pcm, inputSampleRate, locale)
	}
	ev.Kind, ev.AudioSeconds = "transcription", seconds
	e.observeSpeech(ctx, ev, start, err)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", newProblem(http.StatusServiceUnavailable, CodeTranscriberUnavailable, "the audio was not transcribed within the turn's time limit")
	case ctx.Err() != nil:
		return "", newProblem(http.StatusServiceUnavailable, CodeTranscriberUnavailable, "the request ended before the audio was transcribed")
	case errors.Is(err, ErrNotUnderstood):
		e.log.InfoContext(ctx, "speech not understood", "requestId", req.ID, "tenant", req.Tenant.Key)
		return "", nil
	case errors.Is(err, ErrUnsupportedLocale):
		return "", newProblem(http.StatusUnprocessableEntity, CodeUnsupportedLocale, "speech in locale "+locale+" cannot be recognised; send a transcript")
	case err != nil:
		e.log.WarnContext(ctx, "transcription failed", "requestId", req.ID, "tenant", req.Tenant.Key, "err", err)
		return "", newProblem(http.StatusServiceUnavailable, CodeTranscriberUnavailable, "the audio could not be transcribed; try again")
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return "", newProblem(http.StatusUnprocessableEntity, CodeNoSpeech, "no speech was heard in the audio")
	}
	return text, nil
}

// hearTurn turns the audio of a turn's body, if any, into its transcript before the turn
// starts.
func (e *Engine) hearTurn(ctx context.Context, t *turn, b *turnRequest) *Problem {
	if b.pcm != nil {
		return e.hearPCM(ctx, t, b.pcm, b.listening)
	}
	if b.AudioBase64 == nil && b.wav == nil {
		return nil
	}
	if e.transcriber == nil {
		return newProblem(http.StatusServiceUnavailable, CodeTranscriberUnavailable, "this engine has no speech recognition; send a transcript")
	}
	raw := b.wav
	if b.AudioBase64 != nil {
		var err error
		if raw, err = base64.StdEncoding.DecodeString(*b.AudioBase64); err != nil {
			return newProblem(http.StatusUnprocessableEntity, CodeInvalidAudio, "audio_base64 is not valid base64")
		}
	}
	pcm, err := audio.DecodeWAV(raw, inputSampleRate, maxInputSeconds)
	if err != nil {
		return newProblem(http.StatusUnprocessableEntity, CodeInvalidAudio, strings.TrimPrefix(err.Error(), audio.ErrInvalid.Error()+": "))
	}
	return e.hearPCM(ctx, t, pcm, nil)
}

// hearPCM transcribes a turn's speech; the record keeps its length and hash.
func (e *Engine) hearPCM(ctx context.Context, t *turn, pcm []int16, listening Listening) *Problem {
	text, p := e.hear(ctx, t.req, pcm, listening, t.locale)
	if p != nil {
		return p
	}
	t.transcript, t.heard, t.unclear = text, true, text == ""
	if e.recorder != nil {
		h := sha256.New()
		_ = binary.Write(h, binary.LittleEndian, pcm)
		t.audio = &HeardAudio{Seconds: float64(len(pcm)) / inputSampleRate, SHA256: hex.EncodeToString(h.Sum(nil))}
	}
	return nil
}

// Listen starts hearing c's next utterance while it is spoken, in locale ("" is the tenant's),
// when the Config.Transcriber is a [StreamingTranscriber]: for a transport that streams audio,
// which writes it as it comes and hands it to the turn ([TurnInput].Listening). It is nil, nil
// when the transcriber does not stream. ctx bounds the utterance.
func (e *Engine) Listen(ctx context.Context, c *Caller, locale string) (Listening, error) {
	st, ok := e.transcriber.(StreamingTranscriber)
	if !ok || c == nil {
		return nil, nil
	}
	t, err := e.tenant(ctx, c.EngineKey, c.RequestID)
	if err != nil {
		return nil, err
	}
	return st.Listen(ctx, t, inputSampleRate, cmp.Or(locale, t.Locale))
}
