package pii_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/slogtest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/pii"
)

const (
	phone = "+34 612 345 678"
	email = "alice@example.com"
)

// tenantLogger returns a logger through a Privacy's LogHandler that has seen a turn of
// pk_phone (phone numbers masked in its logs), pk_other (e-mail addresses looked for, passed
// in logs) and pk_keep (phone numbers masked, keep_last 2).
func tenantLogger(t *testing.T) (*slog.Logger, *bytes.Buffer, *counts) {
	t.Helper()
	c := &counts{m: map[string]int{}}
	p, err := pii.NewPrivacy(&pii.PrivacyOptions{Handled: c.add})
	if err != nil {
		t.Fatal(err)
	}
	for key, policy := range map[string]string{
		"pk_phone": `{"kinds":{"phone":{"logs":"mask"}}}`,
		"pk_other": `{"kinds":{"email":{"logs":"pass"}}}`,
		"pk_keep":  `{"keep_last":2,"kinds":{"phone":{}}}`,
	} {
		if p.Turn(&engine.Tenant{Key: key, Privacy: json.RawMessage(policy)}) == nil {
			t.Fatalf("no shield for %s", key)
		}
	}
	var buf bytes.Buffer
	return slog.New(p.LogHandler(slog.NewJSONHandler(&buf, nil), nil)), &buf, c
}

func TestLogHandlerByTenant(t *testing.T) {
	line := "backend: no account for " + email + ", call " + phone + ", card " + card
	for _, tc := range []struct {
		name string
		log  func(*slog.Logger)
		want []string // in the line
		not  []string // not in the line
	}{
		{"tenant that masks phones", func(l *slog.Logger) { l.Warn("tool failed", "tenant", "pk_phone", "err", errors.New(line)) },
			[]string{"•••• 5678", email, "•••• 1111"}, []string{phone, "4111 1111"}},
		{"tenant without a phone rule", func(l *slog.Logger) { l.Warn("tool failed", "tenant", "pk_other", "err", errors.New(line)) },
			[]string{phone, email, "•••• 1111"}, []string{"•••• 5678", "4111 1111"}},
		{"line without a tenant", func(l *slog.Logger) { l.Warn("tool failed", "err", errors.New(line)) },
			[]string{phone, email, "•••• 1111"}, []string{"4111 1111"}},
		{"tenant never seen", func(l *slog.Logger) { l.Warn("tool failed", "tenant", "pk_new", "err", errors.New(line)) },
			[]string{phone}, []string{"4111 1111"}},
		{"tenant bound with With", func(l *slog.Logger) { l.With("tenant", "pk_phone").Warn("tool failed", "err", line) },
			[]string{"•••• 5678"}, []string{phone, "4111 1111"}},
		{"tenant after the value", func(l *slog.Logger) { l.Warn("tool failed", "err", line, "tenant", "pk_phone") },
			[]string{"•••• 5678"}, []string{phone}},
		{"value bound before the tenant", func(l *slog.Logger) { l.With("err", line).With("tenant", "pk_phone").Warn("tool failed") },
			[]string{"•••• 5678"}, []string{phone}},
		{"value bound, tenant in the record", func(l *slog.Logger) { l.With("err", line).Warn("tool failed", "tenant", "pk_phone") },
			[]string{"•••• 5678"}, []string{phone}},
		{"value in a group", func(l *slog.Logger) {
			l.With("tenant", "pk_phone").WithGroup("call").With("args", line).Warn("tool failed", "msg", "call "+phone)
		}, []string{"•••• 5678"}, []string{phone}},
		{"message", func(l *slog.Logger) { l.Warn("call "+phone, "tenant", "pk_phone") },
			[]string{"call •••• 5678"}, []string{phone}},
		{"keep_last", func(l *slog.Logger) { l.Warn("tool failed", "tenant", "pk_keep", "err", line) },
			[]string{"•••• 78", "•••• 1111"}, []string{phone}},
		{"a tenant in a group is not the line's", func(l *slog.Logger) { l.Warn("tool failed", slog.Group("g", "tenant", "pk_phone"), "err", line) },
			[]string{phone}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, buf, _ := tenantLogger(t)
			tc.log(log)
			out := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the line lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("the line holds %q:\n%s", n, out)
				}
			}
		})
	}
}

func TestLogHandlerCounts(t *testing.T) {
	log, _, c := tenantLogger(t)
	log.With("tenant", "pk_phone").Warn("tool failed", "err", "call "+phone+" or "+phone+", card "+card)
	log.Warn("no tenant", "card", card)
	want := map[string]int{"pk_phone/phone/logs": 2, "pk_phone/card/logs": 1, "/card/logs": 1}
	if len(c.m) != len(want) {
		t.Errorf("counts %v, want %v", c.m, want)
	}
	for k, n := range want {
		if c.m[k] != n {
			t.Errorf("counts %v, want %v", c.m, want)
		}
	}
}

func TestLogHandlerLatestPolicy(t *testing.T) {
	p, _ := pii.NewPrivacy(nil)
	var buf bytes.Buffer
	log := slog.New(p.LogHandler(slog.NewJSONHandler(&buf, nil), nil))
	p.Turn(&engine.Tenant{Key: "pk", Privacy: json.RawMessage(`{"kinds":{"phone":{}}}`)})
	log.Info("call "+phone, "tenant", "pk")
	// The tenant's file is reloaded: phone numbers pass in its logs.
	p.Turn(&engine.Tenant{Key: "pk", Privacy: json.RawMessage(`{"kinds":{"phone":{"logs":"pass"}}}`)})
	log.Info("call "+phone, "tenant", "pk")
	// Then its policy is removed.
	p.Turn(&engine.Tenant{Key: "pk"})
	log.Info("call "+phone, "tenant", "pk")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || strings.Contains(lines[0], phone) || !strings.Contains(lines[1], phone) || !strings.Contains(lines[2], phone) {
		t.Errorf("lines:\n%s", buf.String())
	}
}

func TestLogHandlerConformance(t *testing.T) {
	p, _ := pii.NewPrivacy(nil)
	p.Turn(&engine.Tenant{Key: "pk", Privacy: json.RawMessage(`{"preset":"banking"}`)})
	var buf bytes.Buffer
	h := p.LogHandler(slog.NewJSONHandler(&buf, nil), nil)
	slogtest.Run(t, func(*testing.T) slog.Handler { buf.Reset(); return h }, func(t *testing.T) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	})
}

func TestLogHandlerConcurrent(t *testing.T) {
	p, _ := pii.NewPrivacy(nil)
	var buf syncBuffer
	log := slog.New(p.LogHandler(slog.NewJSONHandler(&buf, nil), nil)).With("tenant", "pk")
	p.Turn(&engine.Tenant{Key: "pk", Privacy: json.RawMessage(`{"kinds":{"phone":{}}}`)})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				if i%2 == 0 {
					p.Turn(&engine.Tenant{Key: "pk", Privacy: json.RawMessage(`{"kinds":{"phone":{}}}`)})
				}
				log.Info("call "+phone, "card", card)
			}
		})
	}
	wg.Wait()
	out := buf.String()
	if strings.Contains(out, card) || strings.Contains(out, phone) || strings.Count(out, "\n") != 400 {
		t.Errorf("%d lines, a card or a phone number went through:\n%s", strings.Count(out, "\n"), out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCheckLogs(t *testing.T) {
	for policy, ok := range map[string]bool{
		`{"kinds":{"phone":{"logs":"mask"}}}`:                   true,
		`{"kinds":{"card":{"logs":"pass"}}}`:                    true,
		`{"kinds":{"phone":{"logs":"placeholder"}}}`:            false,
		`{"preset":"banking","kinds":{"iban":{"logs":"hide"}}}`: false,
	} {
		err := pii.Check(&engine.Tenant{Key: "k", Privacy: json.RawMessage(policy)})
		if (err == nil) != ok {
			t.Errorf("Check(%s) = %v, want ok %v", policy, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), ".logs") {
			t.Errorf("the error does not name the field: %v", err)
		}
	}
}

// TestKnowBeforeTheFirstTurn: tenants a host makes known when it loads them have their lines
// masked by their policy before any turn; a broken policy is refused and its lines get the
// banking preset meanwhile.
func TestKnowBeforeTheFirstTurn(t *testing.T) {
	p, err := pii.NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Know(&engine.Tenant{Key: "pk_phone", Privacy: json.RawMessage(`{"kinds":{"phone":{"logs":"mask"}}}`)},
		&engine.Tenant{Key: "pk_broken", Privacy: json.RawMessage(`{"preset":"lax"}`)})
	if !errors.Is(err, pii.ErrPolicy) || !strings.Contains(err.Error(), `tenant "pk_broken"`) {
		t.Errorf("Know: %v", err)
	}
	var buf bytes.Buffer
	log := slog.New(p.LogHandler(slog.NewJSONHandler(&buf, nil), nil))
	log.Info("session created", "tenant", "pk_phone", "note", "call "+phone)
	log.Info("session created", "tenant", "pk_broken", "note", "iban GB82 WEST 1234 5698 7654 32")
	if out := buf.String(); strings.Contains(out, phone) || !strings.Contains(out, "•••• 5678") || strings.Contains(out, "WEST") {
		t.Errorf("the lines:\n%s", out)
	}
}
