package main

import (
	"context"
	"io"
	"time"

	"github.com/convengine/engine/client"
)

// ttsMode synthesizes speech (POST /engine/tts): the time to the first byte of audio, and to
// the end of the WAV file.
type ttsMode struct{ cfg *config }

func (m *ttsMode) describe() string { return "a speech synthesis (POST /engine/tts)" }

func (m *ttsMode) worker(ctx context.Context, t *target, s slot) (worker, error) {
	c, err := m.cfg.newClient(t)
	if err != nil {
		return nil, err
	}
	if err := m.cfg.startSession(ctx, c); err != nil {
		return nil, err
	}
	return &ttsWorker{c: c, text: m.cfg.say, voice: m.cfg.voice, buf: make([]byte, 32<<10)}, nil
}

type ttsWorker struct {
	c           *client.Client
	text, voice string
	buf         []byte
}

func (w *ttsWorker) do(ctx context.Context, start time.Time) (sample, error) {
	audio, err := w.c.TTS(ctx, w.text, w.voice)
	if err != nil {
		return sample{total: time.Since(start), code: errorCode(err)}, nil
	}
	defer audio.Close()
	var s sample
	for {
		n, err := audio.Read(w.buf)
		if n > 0 && s.first == 0 {
			s.first = time.Since(start)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			s.code = errorCode(err)
			break
		}
	}
	s.total = time.Since(start)
	if s.first == 0 && s.code == "" {
		s.code = "empty_audio"
	}
	return s, nil
}
