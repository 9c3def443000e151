package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/convengine/engine/internal/fill"
	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/internal/locale"
	"github.com/convengine/engine/internal/token"
	"github.com/convengine/engine/internal/verbalize"
	"github.com/convengine/engine/widgets"
)

// errNotShownExactly is wrapped by confirmWidget's error when the confirm copy cannot show the
// arguments exactly as they will be sent: the call fails back to the model, which may call again.
var errNotShownExactly = errors.New("the confirmation cannot show these arguments exactly")

// confirmWidget turns a model's call of an action tool into a confirm widget whose token lets
// the execute endpoint run exactly this call, once, before it expires.
// sayConfirms makes sure that a voice turn proposing an action says what it would do: when the
// answer did not say every number a confirm widget shows (the amount, an account's digits),
// the confirm's body is said after it. A listener does not see the card; money is never
// proposed unheard.
func (e *Engine) sayConfirms(t *turn) {
	if t.mode != ModeVoice && !t.heard {
		return
	}
	said := t.speak.String()
	for _, w := range t.widgets {
		c, ok := w.(widgets.Confirm)
		if !ok || c.Body == "" {
			continue
		}
		for _, n := range verbalize.NumberRuns(c.Body) {
			if !strings.Contains(said, n) {
				e.speakLine(t, c.Body)
				said = t.speak.String()
				break
			}
		}
	}
}

func (e *Engine) confirmWidget(t *turn, call ToolCall) (widgets.Confirm, error) {
	action := t.req.Tenant.Actions[call.Name]
	cp, ok := locale.Lookup(action.Confirm, t.locale, t.req.Tenant.Locale)
	if !ok {
		return widgets.Confirm{}, fmt.Errorf("action %s has no confirm copy", call.Name)
	}
	canon, err := jsonenc.Canonicalize(call.Arguments)
	if err != nil {
		return widgets.Confirm{}, fmt.Errorf("action %s arguments: %w", call.Name, err)
	}
	hash := jsonenc.Hash(canon)
	args := shownArgs(canon)
	if err := fill.CheckShown([]string{cp.Title, cp.Body, cp.ConfirmLabel, cp.CancelLabel}, args); err != nil {
		return widgets.Confirm{}, fmt.Errorf("%w: %w", errNotShownExactly, err)
	}
	now := e.now()
	exp := now.Add(t.req.Tenant.Limits.ActionTTL.or(10 * time.Minute)).Truncate(time.Second)
	jti := uuid.NewString()
	shown, sealed := json.RawMessage(canon), ""
	if masked := t.toUser(string(canon)); masked != string(canon) {
		// The client is shown, and posts back, the arguments masked; the token seals the real.
		if shown, err = jsonenc.Canonicalize([]byte(masked)); err != nil {
			return widgets.Confirm{}, fmt.Errorf("action %s arguments masked: %w", call.Name, err)
		}
		hash, sealed = jsonenc.Hash(shown), e.actionTokens.SealArguments(canon)
	}
	tok, err := e.actionTokens.Sign(token.ActionClaims{
		Claims: jwt.Claims{ID: jti, IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(exp)},
		Tenant: t.req.Tenant.Key, Env: t.req.Environment.Name, User: e.userOf(t.req),
		Session: t.sessionID, Conversation: t.conversationID, Turn: t.turnID, Tool: call.Name, ArgsHash: hash, Sealed: sealed,
	})
	if err != nil {
		return widgets.Confirm{}, fmt.Errorf("signing action token: %w", err)
	}
	w := confirmCopy(cp, args, t.toUser)
	w.ID, w.ExpiresAt, w.Execute = jti, exp.UTC(), widgets.Execute{Tool: call.Name, Arguments: shown, Token: tok}
	return w, nil
}

// shownArgs decodes an action's canonical arguments for its copy. Numbers stay as written, so
// that the copy shows an amount to the cent, never rounded.
func shownArgs(canon []byte) map[string]any {
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(canon))
	dec.UseNumber()
	_ = dec.Decode(&args)
	return args
}

// confirmCopy fills the tenant's confirm copy with the arguments, as the user reads it.
func confirmCopy(cp ConfirmCopy, args map[string]any, toUser func(string) string) widgets.Confirm {
	return widgets.Confirm{Title: toUser(fill.Args(cp.Title, args)), Body: toUser(fill.Args(cp.Body, args)),
		ConfirmLabel: toUser(fill.Args(cp.ConfirmLabel, args)), CancelLabel: toUser(fill.Args(cp.CancelLabel, args))}
}
