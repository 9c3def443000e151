package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
)

// client posts voice turns to an engine as an app does: one POST /engine per utterance, with
// the recording as a 16 kHz WAV file, each a new conversation so that no turn leans on the one
// before.
type client struct {
	base, key, token string
	http             *http.Client
	seq              atomic.Int64
}

// turn sends pcm and returns the engine's answer. Overload answers (429, 503 overloaded) are
// retried after a pause, since they say nothing about the recogniser.
func (c *client) turn(ctx context.Context, pcm []int16) (Answer, error) {
	body, err := json.Marshal(map[string]string{
		"audio_base64": base64.StdEncoding.EncodeToString(audio.EncodeWAV(pcm, sampleRate)),
		"mode":         "voice",
	})
	if err != nil {
		return Answer{}, err
	}
	for attempt := 0; ; attempt++ {
		a, retry, err := c.post(ctx, body)
		if !retry || attempt == 5 {
			return a, err
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * time.Second):
		}
	}
}

func (c *client) post(ctx context.Context, body []byte) (a Answer, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+engine.PathTurn, bytes.NewReader(body))
	if err != nil {
		return a, false, err
	}
	req.Header.Set(engine.HeaderEngineKey, c.key)
	req.Header.Set(engine.HeaderUserToken, c.token)
	req.Header.Set(engine.HeaderRequestID, "prod-voicebench-"+strconv.FormatInt(c.seq.Add(1), 10))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return a, false, err
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		var p struct{ Code, Detail string }
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(b, &p) != nil || p.Code == "" {
			return a, false, fmt.Errorf("status %d: %.200s", resp.StatusCode, b)
		}
		a.Problem = p.Code
		retry = resp.StatusCode == http.StatusTooManyRequests || p.Code == "overloaded"
		if resp.StatusCode != http.StatusUnprocessableEntity {
			// 422 (no_speech) is the recogniser's answer; anything else is the run's failure.
			err = fmt.Errorf("status %d %s: %s", resp.StatusCode, p.Code, p.Detail)
		}
		return a, retry, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return a, false, fmt.Errorf("status 200 with Content-Type %q", ct)
	}
	t, err := enginetest.ReadTurn(resp.Body)
	if err != nil {
		return a, false, err
	}
	a.Spec = t.Spec
	return a, false, nil
}
