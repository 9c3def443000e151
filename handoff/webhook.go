package handoff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/convengine/engine"
)

// WebhookOptions configure the deliveries of a [Webhook].
type WebhookOptions struct {
	// Client sends the requests; nil means one with a 10-second time-out per request.
	Client *http.Client
	// Backoff are the waits before each retry of a delivery that failed (a network error, a
	// 408, 429 or 5xx); nil means 0.5, 1, 2, 4 and 8 seconds. A 4xx otherwise is not retried.
	Backoff []time.Duration
	// Now is the clock of signatures; nil means time.Now.
	Now func() time.Time
}

// Webhook is a [Handoff] to a tenant's contact centre over HTTP: each event is a JSON POST
// to its URL, signed in the Engine-Signature header with the tenant's secret (see [Sign]),
// and retried with backoff. The centre answers at POST /engine/handoff/events
// ([Switchboard.EventsHandler]). It is safe for concurrent use.
type Webhook struct {
	url    string
	secret string
	client *http.Client
	wait   []time.Duration
	now    func() time.Time
}

// NewWebhook returns the webhook of url, signed with secret.
func NewWebhook(url, secret string, o *WebhookOptions) *Webhook {
	w := &Webhook{url: url, secret: secret, client: &http.Client{Timeout: 10 * time.Second}, now: time.Now,
		wait: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}}
	if o != nil {
		if o.Client != nil {
			w.client = o.Client
		}
		if o.Backoff != nil {
			w.wait = o.Backoff
		}
		if o.Now != nil {
			w.now = o.Now
		}
	}
	return w
}

// Start implements [Handoff]: the handoff.requested event.
func (w *Webhook) Start(ctx context.Context, r *Request) error {
	return w.deliver(ctx, struct {
		Type string `json:"type"`
		*Request
	}{"handoff.requested", r})
}

// Send implements [Handoff]: the user.message event.
func (w *Webhook) Send(ctx context.Context, m *Message) error {
	return w.deliver(ctx, struct {
		Type string `json:"type"`
		*Message
	}{"user.message", m})
}

// End implements [Handoff]: the handoff.ended event.
func (w *Webhook) End(ctx context.Context, id, reason string) error {
	return w.deliver(ctx, map[string]string{"type": "handoff.ended", "id": id, "reason": reason})
}

// errPermanent marks a refusal that a retry would not change.
var errPermanent = errors.New("handoff: the contact centre refused the event")

func (w *Webhook) deliver(ctx context.Context, event any) error {
	body, err := json.Marshal(event)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err = w.post(ctx, body)
		if err == nil || errors.Is(err, errPermanent) || attempt >= len(w.wait) {
			return err
		}
		t := time.NewTimer(w.wait[attempt])
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

func (w *Webhook) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %v", errPermanent, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(w.secret, w.now(), body))
	res, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("handoff: posting to the contact centre: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	switch c := res.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return fmt.Errorf("handoff: the contact centre answered %d", c)
	default:
		return fmt.Errorf("%w: %d", errPermanent, c)
	}
}

// PathEvents is where a contact centre answers, and PathStream and PathMessages where the
// customer follows a handoff and writes to the person ({id} is the handoff's).
const (
	PathEvents   = "/engine/handoff/events"
	PathStream   = "/engine/handoff/{id}/events"
	PathMessages = "/engine/handoff/{id}/messages"
)

// maxAnswer bounds the body of a contact centre's answer.
const maxAnswer = 64 << 10

// EventsHandler is POST /engine/handoff/events, where contact centres answer: authenticated
// by the Engine-Signature alone, with the secret of the handoff's tenant. A bad or stale
// signature, or one seen before, is 401; an unknown handoff 404; one that is over 409.
func (s *Switchboard) EventsHandler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, maxAnswer))
		if err != nil {
			engine.WriteProblem(rw, engine.NewProblem(http.StatusRequestEntityTooLarge, engine.CodeInvalidRequest, "the body is larger than 64 KiB"))
			return
		}
		var in struct {
			Type  string `json:"type"`
			ID    string `json:"id"`
			Agent struct {
				Name string `json:"name"`
			} `json:"agent"`
			Text   string `json:"text"`
			Note   string `json:"note"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(body, &in); err != nil || in.ID == "" || len(in.ID) > 64 {
			engine.WriteProblem(rw, engine.InvalidField("id", "must name a handoff, in a JSON object"))
			return
		}
		ctx := r.Context()
		st, err := s.store.Get(ctx, in.ID)
		if err != nil {
			s.storeProblem(rw, err)
			return
		}
		_, c, err := s.config(ctx, st.Tenant)
		if err != nil || c == nil || c.Webhook == "" {
			engine.WriteProblem(rw, engine.NewProblem(http.StatusNotFound, engine.CodeNotFound, "no such handoff"))
			return
		}
		sig, err := Verify(c.Secret, r.Header.Get(SignatureHeader), body, s.now())
		if err == nil {
			var fresh bool
			if fresh, err = s.replay.Claim(ctx, "handoff-signature:"+sig, s.now().Add(2*Tolerance)); err == nil && !fresh {
				err = errors.New("handoff: the signature was used before")
			} else if err != nil {
				s.log.ErrorContext(ctx, "handoff: the replay store failed", "err", err)
				engine.WriteProblem(rw, engine.NewProblem(http.StatusServiceUnavailable, engine.CodeStoreUnavailable, "try again"))
				return
			}
		}
		if err != nil {
			engine.WriteProblem(rw, engine.NewProblem(http.StatusUnauthorized, CodeBadSignature,
				"the Engine-Signature is missing, wrong, more than five minutes off, or used before"))
			return
		}
		a := &Answer{Type: in.Type, ID: in.ID, Agent: in.Agent.Name, Text: in.Text, Note: in.Note, Reason: in.Reason}
		if err := s.Answer(ctx, a); err != nil {
			s.storeProblem(rw, err)
			return
		}
		rw.WriteHeader(http.StatusNoContent)
	})
}

// CodeBadSignature is the problem code of a contact centre's answer whose signature is
// refused; CodeHandoffEnded that of an answer about a handoff that is over.
const (
	CodeBadSignature = "invalid_signature"
	CodeHandoffEnded = "handoff_ended"
)

func (s *Switchboard) storeProblem(rw http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		engine.WriteProblem(rw, engine.NewProblem(http.StatusNotFound, engine.CodeNotFound, "no such handoff"))
	case errors.Is(err, ErrEnded):
		engine.WriteProblem(rw, engine.NewProblem(http.StatusConflict, CodeHandoffEnded, "the handoff is over"))
	case errors.Is(err, ErrInvalid):
		engine.WriteProblem(rw, engine.NewProblem(http.StatusBadRequest, engine.CodeInvalidRequest, err.Error()))
	default:
		s.log.Error("handoff: the store failed", "err", err)
		engine.WriteProblem(rw, engine.NewProblem(http.StatusServiceUnavailable, engine.CodeStoreUnavailable, "the handoff could not be read; try again"))
	}
}
