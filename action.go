package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/convengine/engine/internal/jcs"
	"github.com/convengine/engine/internal/token"
	"github.com/convengine/engine/widgets"
)

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
	var args map[string]any
	_ = json.Unmarshal(canon, &args)
	now := e.now()
	exp := now.Add(t.req.Tenant.Limits.ActionTTL.or(10 * time.Minute)).Truncate(time.Second)
	jti := uuid.NewString()
	tok, err := e.actionTokens.Sign(token.ActionClaims{
		Claims: jwt.Claims{ID: jti, IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(exp)},
		Tenant: t.req.Tenant.Key, Session: t.sessionID, Tool: call.Name, ArgsHash: hash,
	})
	if err != nil {
		return widgets.Confirm{}, fmt.Errorf("signing action token: %w", err)
	}
	return widgets.Confirm{
		ID:           jti,
		Title:        fillArgs(cp.Title, args),
		Body:         fillArgs(cp.Body, args),
		ConfirmLabel: fillArgs(cp.ConfirmLabel, args),
		CancelLabel:  fillArgs(cp.CancelLabel, args),
		ExpiresAt:    exp.UTC(),
		Execute:      widgets.Execute{Tool: call.Name, Arguments: canon, Token: tok},
	}, nil
}

// fillArgs replaces {name} with the value at a dotted path of args and {name|money} with a
// number written with two decimals and thousands separators.
func fillArgs(s string, args map[string]any) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		name, format, _ := strings.Cut(s[i+1:i+j], "|")
		b.WriteString(formatArg(lookupPath(args, strings.TrimSpace(name)), strings.TrimSpace(format)))
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// lookupPath finds a dotted path ("result.balance") in nested objects.
func lookupPath(m map[string]any, path string) any {
	var cur any = m
	for part := range strings.SplitSeq(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[part]
	}
	return cur
}

func formatArg(v any, format string) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		if format == "money" {
			if f, err := x.Float64(); err == nil {
				return money(f)
			}
		}
		return x.String()
	case float64:
		if format == "money" {
			return money(x)
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// money writes f with two decimals and comma thousands separators: 1234.5 → "1,234.50".
func money(f float64) string {
	neg := f < 0
	s := strconv.FormatFloat(math.Abs(f), 'f', 2, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteByte('.')
	b.WriteString(frac)
	return b.String()
}
