package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/convengine/engine/internal/fill"
	"github.com/convengine/engine/internal/jcs"
	"github.com/convengine/engine/internal/token"
	"github.com/convengine/engine/widgets"
)

// errNotShownExactly is wrapped by confirmWidget's error when the confirm copy cannot show the
// arguments exactly as they will be sent: the call fails back to the model, which may call again.
var errNotShownExactly = errors.New("the confirmation cannot show these arguments exactly")

// confirmWidget turns a model's call of an action tool into a confirm widget whose token lets
// the execute endpoint run exactly this call, once, before it expires.
func (e *Engine) confirmWidget(t *turn, call ToolCall) (widgets.Confirm, error) {
	action := t.req.Tenant.Actions[call.Name]
	cp, ok := lookupLocale(action.Confirm, t.locale, t.req.Tenant.Locale)
	if !ok {
		return widgets.Confirm{}, fmt.Errorf("action %s has no confirm copy", call.Name)
	}
	canon, err := jcs.Canonicalize(call.Arguments)
	if err != nil {
		return widgets.Confirm{}, fmt.Errorf("action %s arguments: %w", call.Name, err)
	}
	hash := jcs.Hash(canon)
	// Numbers stay as written, so that the copy shows an amount to the cent, never rounded.
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(canon))
	dec.UseNumber()
	_ = dec.Decode(&args)
	if err := fill.CheckShown([]string{cp.Title, cp.Body, cp.ConfirmLabel, cp.CancelLabel}, args); err != nil {
		return widgets.Confirm{}, fmt.Errorf("%w: %w", errNotShownExactly, err)
	}
	now := e.now()
	exp := now.Add(t.req.Tenant.Limits.ActionTTL.or(10 * time.Minute)).Truncate(time.Second)
	jti := uuid.NewString()
	tok, err := e.actionTokens.Sign(token.ActionClaims{
		Claims: jwt.Claims{ID: jti, IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(exp)},
		Tenant: t.req.Tenant.Key, Env: t.req.Environment.Name, User: e.limits.userBucket(t.req.Tenant.Key, t.req.UserToken),
		Session: t.sessionID, Tool: call.Name, ArgsHash: hash,
	})
	if err != nil {
		return widgets.Confirm{}, fmt.Errorf("signing action token: %w", err)
	}
	return widgets.Confirm{
		ID:           jti,
		Title:        fill.Args(cp.Title, args),
		Body:         fill.Args(cp.Body, args),
		ConfirmLabel: fill.Args(cp.ConfirmLabel, args),
		CancelLabel:  fill.Args(cp.CancelLabel, args),
		ExpiresAt:    exp.UTC(),
		Execute:      widgets.Execute{Tool: call.Name, Arguments: canon, Token: tok},
	}, nil
}
