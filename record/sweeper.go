package record

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/convengine/engine"
)

// Retention is a tenant's retention: the tenant file's records section.
type Retention struct {
	// Days is how long a conversation is kept after its last entry; 0 keeps it forever.
	Days int `json:"retention_days"`
	// ActionDays is how long a conversation that holds action evidence is kept after that
	// evidence; 0 means 1825 (five years, as MiFID II art. 16(7) asks).
	ActionDays int `json:"action_retention_days"`
}

// DefaultActionDays is the retention of action evidence when a tenant names none.
const DefaultActionDays = 1825

// RetentionOf reads a tenant's records section ({"retention_days": N,
// "action_retention_days": M}); none is no retention.
func RetentionOf(t *engine.Tenant) (Retention, error) {
	var r Retention
	if len(t.Records) == 0 {
		return r, nil
	}
	if err := json.Unmarshal(t.Records, &r); err != nil {
		return r, fmt.Errorf("record: tenant %s: reading records: %w", t.Key, err)
	}
	if r.Days < 0 || r.ActionDays < 0 {
		return r, fmt.Errorf("record: tenant %s: a negative retention", t.Key)
	}
	return r, nil
}

// Sweep deletes, with a signed prune statement each, a tenant's conversations whose last entry
// is older than its retention, keeping those that hold action evidence younger than its
// action retention and those of users under legal hold. It returns how many it pruned.
func (r *Recorder) Sweep(ctx context.Context, tenant string, ret Retention) (int, error) {
	if ret.Days <= 0 {
		return 0, nil
	}
	actionDays := ret.ActionDays
	if actionDays == 0 {
		actionDays = DefaultActionDays
	}
	now := r.now()
	cutoff := now.AddDate(0, 0, -ret.Days)
	actionCutoff := now.AddDate(0, 0, -actionDays)
	q := ChainQuery{Tenant: tenant, EndedBefore: cutoff, Limit: 200}
	pruned := 0
	for {
		cs, err := r.store.Chains(ctx, q)
		if err != nil {
			return pruned, fmt.Errorf("record: sweeping: %w", err)
		}
		if len(cs) == 0 {
			return pruned, nil
		}
		for _, c := range cs {
			if !c.LastAt.Before(actionCutoff) {
				young, err := r.holdsEvidence(ctx, c.ID)
				if err != nil {
					return pruned, err
				}
				if young {
					continue
				}
			}
			err := r.prune(ctx, c.ID, "retention")
			switch {
			case errors.Is(err, ErrLegalHold), errors.Is(err, ErrNotFound):
			case err != nil:
				return pruned, err
			default:
				pruned++
			}
		}
		last := cs[len(cs)-1]
		q.AfterAt, q.AfterID = last.FirstAt, last.ID
	}
}

// holdsEvidence says whether a chain holds an action or an outcome.
func (r *Recorder) holdsEvidence(ctx context.Context, chain string) (bool, error) {
	var after int64
	for {
		es, err := r.store.Entries(ctx, chain, after, 500)
		if err != nil {
			return false, fmt.Errorf("record: sweeping: %w", err)
		}
		if len(es) == 0 {
			return false, nil
		}
		for _, e := range es {
			if e.Kind == KindAction || e.Kind == KindOutcome {
				return true, nil
			}
		}
		after = es[len(es)-1].Seq
	}
}

func (r *Recorder) prune(ctx context.Context, chain, reason string) error {
	set := r.keys.current()
	return r.store.Prune(ctx, chain, func(c Chain, n int64) (*PruneStatement, error) {
		p := &PruneStatement{ID: uuid.NewString(), At: microseconds(r.now()), Tenant: c.Tenant, Chain: c.ID, Through: c.Head.Seq,
			Head: c.Head.Hash, Entries: n, Reason: reason, KeyID: set.id}
		p.Signature = ed25519.Sign(set.sign, PruneStatementBytes(p))
		return p, nil
	})
}

func (r *Recorder) sweepAll(ctx context.Context) {
	tenants, err := r.o.Retention(ctx)
	if err != nil {
		r.log.Error("record: reading retention failed", "err", err)
		return
	}
	for tenant, ret := range tenants {
		start := time.Now()
		n, err := r.Sweep(ctx, tenant, ret)
		if err != nil {
			r.log.Error("record: a sweep failed", "tenant", tenant, "pruned", n, "err", err)
			continue
		}
		if n > 0 {
			r.log.Info("record: swept", "tenant", tenant, "pruned", n, "took", time.Since(start))
		}
	}
}
