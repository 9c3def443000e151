package pii_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/slogtest"

	"github.com/convengine/engine/pii"
)

func TestRedactingHandlerConformance(t *testing.T) {
	var buf bytes.Buffer
	h := pii.RedactingHandler(slog.NewJSONHandler(&buf, nil), nil)
	slogtest.Run(t, func(*testing.T) slog.Handler { buf.Reset(); return h }, func(t *testing.T) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	})
}

type secret string

func (s secret) LogValue() slog.Value { return slog.StringValue(string(s)) }

func TestRedactingHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(pii.RedactingHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), nil))
	log = log.With("pre", "card "+card)
	log.Debug("user said "+card, "iban", iban, "err", errors.New("backend refused "+card),
		slog.Group("g", "v", secret(iban)), "raw", []byte(card), "n", 4111111111111111)
	out := buf.String()
	for _, v := range []string{"4111 1111", "4111111111111111", "WEST 1234", "GB82WEST"} {
		if strings.Contains(out, v) {
			t.Errorf("the log holds %q:\n%s", v, out)
		}
	}
	if strings.Count(out, "•••• 1111") != 5 {
		t.Errorf("want five masked cards:\n%s", out)
	}
}
