package pii

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// RedactingHandler returns a slog.Handler that masks, before next sees them, the personal data
// d finds in the message and in every string attribute of a record (and in integers that are card numbers), at every level: in groups,
// in the values of slog.LogValuers, and in errors and fmt.Stringers, which are logged as their
// masked text. A nil d means [New](nil): cards, IBANs, phone numbers and e-mail addresses.
// Masks keep the last four characters, as "•••• 1111". It is safe for concurrent use when next
// is.
func RedactingHandler(next slog.Handler, d *Detector) slog.Handler {
	if d == nil {
		d, _ = New(nil)
	}
	return &redacting{next: next, d: d}
}

type redacting struct {
	next slog.Handler
	d    *Detector
}

func (h *redacting) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *redacting) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *redacting) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &redacting{next: h.next.WithAttrs(red), d: h.d}
}

func (h *redacting) WithGroup(name string) slog.Handler {
	return &redacting{next: h.next.WithGroup(name), d: h.d}
}

// attr returns a with its strings redacted.
func (h *redacting) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.redact(v.String()))
	case slog.KindInt64, slog.KindUint64:
		// A card number logged as a number.
		if s := v.String(); len(s) >= 12 {
			if r := h.redact(s); r != s {
				return slog.String(a.Key, r)
			}
		}
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.redact(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.redact(x.String()))
		case []byte:
			return slog.String(a.Key, h.redact(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// redact masks what d finds in s.
func (h *redacting) redact(s string) string {
	ms := h.d.Find(s)
	if len(ms) == 0 && !h.d.Truncated(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m.Start])
		b.WriteString(h.d.Mask(m, 4))
		last = m.End
	}
	if h.d.Truncated(s) {
		// What Find does not read is not logged: it might hold anything.
		end := max(last, h.d.MaxInput())
		for end > last && end < len(s) && s[end]&0xC0 == 0x80 {
			end--
		}
		b.WriteString(s[last:end])
		b.WriteString("…[cut]")
		return b.String()
	}
	b.WriteString(s[last:])
	return b.String()
}
