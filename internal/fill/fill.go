// Package fill writes a tenant's copy for one action: it replaces the {name} placeholders of a
// confirm widget's or a card's text with the arguments and results they name, and makes the
// card that ends a confirmed action ([Reply]).
package fill

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Args replaces {name} with the value at a dotted path of args and {name|money} with a
// number written with two decimals and thousands separators.
func Args(s string, args map[string]any) string {
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
			if m, err := exactMoney(x); err == nil {
				return m
			}
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
	return grouped(strconv.FormatFloat(f, 'f', 2, 64))
}

// grouped puts comma thousands separators in a decimal number written with a dot:
// "-1234.50" → "-1,234.50".
func grouped(s string) string {
	neg := strings.HasPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(strings.TrimPrefix(s, "-"), ".")
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
	if hasFrac {
		b.WriteString("." + frac)
	}
	return b.String()
}

// Copy is a terminal card's text in one locale, and the line spoken with it.
type Copy struct{ Title, Line1, Line2, Speak string }

// Reply is the card that ends a confirmed action and its spoken line: the backend's own when
// its result carries one ({"card":{"title","line1","line2"},"speak":"…"}), else cp filled from
// the arguments and the result ({result.balance}). typ is "success", or "error" when the
// backend declined.
func Reply(result, args []byte, declined bool, cp Copy) (typ string, card Copy) {
	typ = "success"
	if declined {
		typ = "error"
	}
	var own struct {
		Card  *struct{ Type, Title, Line1, Line2 string } `json:"card"`
		Speak string                                      `json:"speak"`
	}
	if json.Unmarshal(result, &own) == nil && own.Card != nil && own.Card.Title != "" {
		return typ, Copy{own.Card.Title, own.Card.Line1, own.Card.Line2, own.Speak}
	}
	var res map[string]any
	_ = json.Unmarshal(result, &res)
	data := map[string]any{}
	_ = json.Unmarshal(args, &data)
	data["result"] = res
	f := func(s string) string { return strings.TrimSpace(Args(s, data)) }
	return typ, Copy{f(cp.Title), f(cp.Line1), f(cp.Line2), f(cp.Speak)}
}
