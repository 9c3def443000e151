package engine

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/internal/token"
)

// transferTools is a Toolset whose one action, transfer, succeeds at once.
type transferTools struct{}

func (transferTools) Tools(context.Context, *ToolEnv) ([]Tool, error) {
	return []Tool{{Name: "transfer", Action: true, Parameters: json.RawMessage(`{"type":"object"}`)}}, nil
}

func (transferTools) Call(context.Context, *ToolEnv, ToolCall) (ToolResult, error) {
	return ToolResult{Content: json.RawMessage(`{"id":"t1","balance_formatted":"$1,214.56"}`)}, nil
}

// executeBench is an engine with a transfer action and execute bodies for it, each with a token
// of its own.
func executeBench(b *testing.B, n int) (http.Handler, []string) {
	b.Helper()
	tenant := &Tenant{Key: "pk_test", Name: "T", Environments: map[string]*Environment{EnvProduction: {}},
		Actions: map[string]*Action{"transfer": {
			Confirm: map[string]ConfirmCopy{"en": {Title: "Send money", Body: "Send ${amount|money} to {to}?", ConfirmLabel: "Send", CancelLabel: "Cancel"}},
			Done:    map[string]CardCopy{"en": {Title: "Money sent", Line1: "${amount|money} to {to}", Line2: "New balance {result.balance_formatted}", Speak: "Done."}},
		}}}
	tenants, err := NewStaticTenants(tenant)
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(Config{Tenants: tenants, Model: nopModel{}, Toolset: transferTools{}, SigningKey: make([]byte, 32),
		Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"amount":20,"to":"Alex"}`)
	canon, _ := jsonenc.Canonicalize(args)
	hash := jsonenc.Hash(canon)
	now := time.Now()
	auth := `"auth":{"method":"faceid","verifiedAt":` + strconv.FormatInt(now.UnixMilli(), 10) + `}`
	bodies := make([]string, n)
	for i := range bodies {
		tok, err := e.actionTokens.Sign(token.ActionClaims{
			Claims: jwt.Claims{ID: "jti-" + strconv.Itoa(i), IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Hour))},
			Tenant: "pk_test", Tool: "transfer", ArgsHash: hash,
		})
		if err != nil {
			b.Fatal(err)
		}
		bodies[i] = `{"execute":{"tool":"transfer","arguments":` + string(args) + `,"token":"` + tok + `"},` + auth + `}`
	}
	return e.Handler(), bodies
}

func runExecute(b *testing.B, h http.Handler, hdr http.Header, body string) {
	req := httptest.NewRequest(http.MethodPost, PathExecute, strings.NewReader(body))
	req.Header = hdr
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}

// BenchmarkExecute measures a confirmed action through the handler, with a backend that
// costs nothing: headers, body, token, the at-most-once claim, the call and the card.
func BenchmarkExecute(b *testing.B) {
	hdr := http.Header{"X-Engine-Key": {"pk_test"}, "X-Token": {"user"}, "X-Request-Id": {"prod-bench"}, "Content-Type": {"application/json"}}
	b.Run("first", func(b *testing.B) {
		h, bodies := executeBench(b, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			runExecute(b, h, hdr, bodies[i])
		}
	})
	b.Run("again", func(b *testing.B) {
		h, bodies := executeBench(b, 1)
		runExecute(b, h, hdr, bodies[0])
		b.ReportAllocs()
		for b.Loop() {
			runExecute(b, h, hdr, bodies[0])
		}
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
