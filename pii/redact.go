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
	return h.next.Handle(ctx, redactRecord(r, h.redact))
}

func (h *redacting) WithAttrs(as []slog.Attr) slog.Handler {
	return &redacting{next: h.next.WithAttrs(redactAttrs(as, h.redact)), d: h.d}
}

func (h *redacting) WithGroup(name string) slog.Handler {
	return &redacting{next: h.next.WithGroup(name), d: h.d}
}

func (h *redacting) redact(s string) string { return redact(s, []redaction{{d: h.d, keep: 4}}) }

// redactRecord returns r with its message and attributes passed through red.
func redactRecord(r slog.Record, red func(string) string) slog.Record {
	out := slog.NewRecord(r.Time, r.Level, red(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a, red))
		return true
	})
	return out
}

func redactAttrs(as []slog.Attr, red func(string) string) []slog.Attr {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = redactAttr(a, red)
	}
	return out
}

// redactAttr returns a, resolved, with its strings passed through red.
func redactAttr(a slog.Attr, red func(string) string) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, red(v.String()))
	case slog.KindInt64, slog.KindUint64:
		// A card number logged as a number.
		if s := v.String(); len(s) >= 12 {
			if r := red(s); r != s {
				return slog.String(a.Key, r)
			}
		}
	case slog.KindGroup:
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(redactAttrs(v.Group(), red)...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, red(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, red(x.String()))
		case []byte:
			return slog.String(a.Key, red(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// redaction is one detector's part in masking a text.
type redaction struct {
	d    *Detector
	keep int
	// only, when set, are the kinds masked of those d finds.
	only *[Custom + 1]bool
	// masked, when set, is told of each value masked.
	masked func(Kind)
}

// redact masks in s what the redactions find, each match with its redaction's keep; where the
// matches of two redactions overlap, the first redaction's is kept. What one of the detectors
// does not read is cut.
func redact(s string, rs []redaction) string {
	type found struct {
		Match
		r int
	}
	var kept []found
	cut := len(s)
	for i, r := range rs {
		if r.d.Truncated(s) {
			cut = min(cut, r.d.MaxInput())
		}
		ms := r.d.Find(s)
		if len(ms) == 0 {
			continue
		}
		// Both lists are in order and without overlaps: merge them, keeping the earlier.
		out := make([]found, 0, len(kept)+len(ms))
		j := 0
		for _, m := range ms {
			if r.only != nil && !r.only[m.Kind] {
				continue
			}
			for j < len(kept) && kept[j].End <= m.Start {
				out = append(out, kept[j])
				j++
			}
			if j < len(kept) && kept[j].Start < m.End {
				continue
			}
			out = append(out, found{m, i})
		}
		kept = append(out, kept[j:]...)
	}
	if len(kept) == 0 && cut == len(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range kept {
		r := rs[m.r]
		b.WriteString(s[last:m.Start])
		b.WriteString(r.d.Mask(m.Match, r.keep))
		if r.masked != nil {
			r.masked(m.Kind)
		}
		last = m.End
	}
	if cut < len(s) {
		// What Find does not read is not logged: it might hold anything.
		end := max(last, cut)
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
