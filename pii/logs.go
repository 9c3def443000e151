package pii

import (
	"context"
	"log/slog"
	"slices"
)

// TenantKey is the attribute that names a log line's tenant, by its key, for
// [Privacy.LogHandler]: the engine writes it in every line of a request.
const TenantKey = "tenant"

// LogHandler returns a slog.Handler that masks personal data before next sees a line, as
// [RedactingHandler] does: in every line, what floor finds (nil floor: card numbers and IBANs);
// and in a line of a tenant (a top-level [TenantKey] attribute, in the record or bound with
// Logger.With), the kinds whose rule in that tenant's policy says "logs": "mask". A tenant's
// policy is known from its first turn in the process (see [Privacy.Turn]); the latest one
// applies. Masks of the tenant's kinds keep its policy's keep_last characters, those of the
// floor four. What is masked is counted through [PrivacyOptions].Handled with where "logs",
// under the line's tenant ("" for a line of none); Handled must not log through the handler.
// The attributes bound with Logger.With are masked at each line, when its tenant is known. It
// is safe for concurrent use when next is.
func (p *Privacy) LogHandler(next slog.Handler, floor *Detector) slog.Handler {
	if floor == nil {
		floor, _ = New(&Options{Kinds: []Kind{Card, IBAN}})
	}
	return &tenantLogs{p: p, floor: floor, next: next, top: true}
}

// tenantLogs is the handler of [Privacy.LogHandler]. It is immutable.
type tenantLogs struct {
	p     *Privacy
	floor *Detector
	next  slog.Handler
	// bound are the With and WithGroup calls made since the first With, not yet applied to
	// next: their attributes are masked at each line, by the line's tenant.
	bound []boundOp
	// tenants are the tenants named by the top-level attributes of bound.
	tenants []string
	// top says whether a record's attributes are at the top level: no group is open.
	top bool
}

// boundOp is a call of WithGroup (group set) or WithAttrs.
type boundOp struct {
	group string
	attrs []slog.Attr
}

func (h *tenantLogs) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *tenantLogs) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	c := *h
	res := make([]slog.Attr, len(as))
	for i, a := range as {
		res[i] = resolveAttr(a)
	}
	c.bound = append(slices.Clip(h.bound), boundOp{attrs: res})
	if h.top {
		c.tenants = tenantsOf(slices.Clip(h.tenants), res)
	}
	return &c
}

func (h *tenantLogs) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.top = false
	if len(h.bound) == 0 {
		c.next = h.next.WithGroup(name) // no attribute waits for a tenant
	} else {
		c.bound = append(slices.Clip(h.bound), boundOp{group: name})
	}
	return &c
}

func (h *tenantLogs) Handle(ctx context.Context, r slog.Record) error {
	tenants := h.tenants
	if h.top {
		var as []slog.Attr
		r.Attrs(func(a slog.Attr) bool {
			as = append(as, a)
			return true
		})
		tenants = tenantsOf(slices.Clip(tenants), as)
	}
	red := h.p.redactor(tenants, h.floor, "logs")
	next := h.next
	for _, op := range h.bound {
		if op.group != "" {
			next = next.WithGroup(op.group)
		} else {
			next = next.WithAttrs(redactAttrs(op.attrs, red))
		}
	}
	return next.Handle(ctx, redactRecord(r, red))
}

// tenantsOf adds to tenants those that the attributes of as name (in groups without a name too,
// which are inlined), once each.
func tenantsOf(tenants []string, as []slog.Attr) []string {
	for _, a := range as {
		v := a.Value.Resolve()
		switch {
		case a.Key == TenantKey && v.Kind() == slog.KindString:
			if !slices.Contains(tenants, v.String()) {
				tenants = append(tenants, v.String())
			}
		case a.Key == "" && v.Kind() == slog.KindGroup:
			tenants = tenantsOf(tenants, v.Group())
		}
	}
	return tenants
}

// resolveAttr resolves a's value, in groups too, as a handler does at With.
func resolveAttr(a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() == slog.KindGroup {
		g := a.Value.Group()
		res := make([]slog.Attr, len(g))
		for i, ga := range g {
			res[i] = resolveAttr(ga)
		}
		a.Value = slog.GroupValue(res...)
	}
	return a
}

// redactor returns what masks the strings of a line of tenants: each tenant's kinds masked in
// logs, then the floor. What it masks is counted with where.
func (p *Privacy) redactor(tenants []string, floor *Detector, where string) func(string) string {
	count := func(tenant string) func(Kind) {
		if p.handled == nil {
			return nil
		}
		return func(k Kind) { p.handled(tenant, k, where, 1) }
	}
	rs := make([]redaction, 0, len(tenants)+1)
	for _, t := range tenants {
		v, ok := p.logs.Load(t)
		if !ok {
			continue
		}
		if c := v.(*compiled); c.anyLogs {
			rs = append(rs, redaction{d: c.det, keep: c.keep, only: &c.logs, masked: count(t)})
		}
	}
	first := ""
	if len(tenants) > 0 {
		first = tenants[0]
	}
	rs = append(rs, redaction{d: floor, keep: 4, masked: count(first)})
	return func(s string) string { return redact(s, rs) }
}

// TraceMasker returns what masks a string of a tenant's (the id of a request or of a
// conversation, which the client chose) as [Privacy.LogHandler] with the same floor masks a
// line of the tenant's (nil floor: card numbers and IBANs), for the attributes of traces.
// What it masks is counted through [PrivacyOptions].Handled with where "traces". It is safe
// for concurrent use.
func (p *Privacy) TraceMasker(floor *Detector) func(tenant, s string) string {
	if floor == nil {
		floor, _ = New(&Options{Kinds: []Kind{Card, IBAN}})
	}
	return func(tenant, s string) string {
		var tenants []string
		if tenant != "" {
			tenants = []string{tenant}
		}
		return p.redactor(tenants, floor, "traces")(s)
	}
}
