// Command guards shows the engine's guards on the demo bank: a blocked user is refused before
// anything runs, a topic the bank will not discuss is answered with its own line, card numbers
// and e-mail addresses are redacted from everything the model is given, and each tool call is
// written to an audit log. It runs a few turns in-process and prints what came of each.
//
//	go run ./examples/guards
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
)

// blocked are the users the bank has blocked from the assistant, by backend token.
var blocked = map[string]bool{"demo-user-blocked": true}

// Personal data that must not reach the model: card numbers (13 to 19 digits, spaced or
// dashed) and e-mail addresses.
var (
	cardNumber = regexp.MustCompile(`\b(?:\d[ -]?){12,18}\d\b`)
	email      = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
)

// redact replaces the personal data in s.
func redact(s string) string {
	s = cardNumber.ReplaceAllString(s, "[card number]")
	return email.ReplaceAllString(s, "[email]")
}

// guards are the bank's rules.
func guards(audit io.Writer) *engine.Guards {
	var mu sync.Mutex
	return &engine.Guards{
		BeforeTurn: func(_ context.Context, t *engine.TurnInfo) (string, error) {
			if blocked[t.Env.UserToken.Reveal()] {
				return "", engine.NewProblem(http.StatusForbidden, "user_blocked", "this account cannot use the assistant; call the bank")
			}
			if strings.Contains(strings.ToLower(t.Transcript), "crypto") {
				return "I can't help with cryptocurrency. I can tell you your balance or your recent transactions.", nil
			}
			return "", nil
		},
		ModelRequest: func(_ context.Context, _ *engine.TurnInfo, req *engine.ModelRequest) error {
			for i := range req.Messages {
				req.Messages[i].Content = redact(req.Messages[i].Content)
			}
			return nil
		},
		ToolCall: func(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall, next func(context.Context, engine.ToolCall) (engine.ToolResult, error)) (engine.ToolResult, error) {
			start := time.Now()
			res, err := next(ctx, call)
			user := sha256.Sum256([]byte(env.UserToken.Reveal())) // the audit names users, never their tokens
			line, _ := json.Marshal(map[string]any{"requestId": env.RequestID, "user": hex.EncodeToString(user[:8]),
				"tool": call.Name, "declined": res.IsError, "failed": err != nil, "ms": time.Since(start).Milliseconds()})
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(audit, string(line))
			return res, err
		},
	}
}

// newEngine serves the demo tenant against bankURL with the bank's guards; model answers.
func newEngine(bankURL string, model engine.Model, audit io.Writer) (*engine.Engine, error) {
	tenant, err := demobank.Tenant(bankURL, "")
	if err != nil {
		return nil, err
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	return engine.New(engine.Config{Tenants: tenants, Model: model, Toolset: httptools.New(nil), SigningKey: key,
		Guards: guards(audit)})
}

// ask runs a turn in-process and says what came of it: the answer, or the problem.
func ask(ctx context.Context, eng *engine.Engine, user, transcript string) string {
	caller := &engine.Caller{EngineKey: demobank.EngineKey, UserToken: user}
	for ev, err := range eng.Turn(ctx, caller, &engine.TurnInput{Transcript: transcript}) {
		if err != nil {
			return "refused: " + err.Error()
		}
		if ev.Type == engine.EventDone {
			return "answered: " + ev.Spec.Speak
		}
	}
	return "no answer"
}

func main() {
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	eng, err := newEngine(bank.URL, intent.New(nil), os.Stderr)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, q := range []struct{ user, text string }{
		{"demo-user", "What's my balance?"},
		{"demo-user", "Should I buy crypto?"},
		{"demo-user-blocked", "What's my balance?"},
		{"demo-user", "show my recent transactions for card 4111 1111 1111 1111"},
	} {
		fmt.Printf("%s: %q\n  %s\n", q.user, q.text, ask(ctx, eng, q.user, q.text))
	}
}
