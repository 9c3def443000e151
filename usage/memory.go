package usage

import (
	"context"
	"sync"
	"time"
)

// DefaultRetention is how long ledgers keep a day's usage.
const DefaultRetention = 35 * 24 * time.Hour

// maxModels bounds the models a ledger tells apart per tenant and day; the calls of others
// are counted under OtherModel.
const maxModels = 32

// OtherModel names the models counted together past the bound on distinct models.
const OtherModel = "other"

// Memory is a ledger in memory: a [Sink] that sums records by tenant, UTC day and model, and
// the [Reader] of those sums. It keeps the days of the last Retention, so that its memory is
// bounded by the tenants, days and models (at most 32 per tenant and day, the others counted as
// "other"), not by the records. Its methods are safe for concurrent use; the zero value is
// ready to use. Its usage dies with the process: a deployment of several replicas, or one that
// bills, uses a shared ledger (such as the Redis ledger of package redisstore).
type Memory struct {
	// Retention is how long a day is kept after it ends; 0 means DefaultRetention.
	Retention time.Duration
	// Now is the clock that retention is measured by; nil means time.Now.
	Now func() time.Time

	mu     sync.Mutex
	days   map[tenantDay]*dayUsage
	pruned string // the day of the last pruning
}

type tenantDay struct{ tenant, day string }

type dayUsage struct {
	Totals
	models map[string]*Totals
}

var (
	_ Sink   = (*Memory)(nil)
	_ Reader = (*Memory)(nil)
)

func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

func (m *Memory) retention() time.Duration {
	if m.Retention > 0 {
		return m.Retention
	}
	return DefaultRetention
}

// WriteUsage adds records to the ledger; it never fails. A record of a day past the retention
// is not kept.
func (m *Memory) WriteUsage(_ context.Context, records []Record) error {
	now := m.now()
	oldest := Day(now.Add(-m.retention()))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.days == nil {
		m.days = map[tenantDay]*dayUsage{}
	}
	if today := Day(now); m.pruned != today {
		for k := range m.days {
			if k.day < oldest {
				delete(m.days, k)
			}
		}
		m.pruned = today
	}
	var dayStart, dayEnd time.Time // the day of the last record, whose name is day
	day := ""
	for i := range records {
		r := &records[i]
		if r.Time.Before(dayStart) || !r.Time.Before(dayEnd) {
			dayStart = truncDay(r.Time)
			dayEnd, day = dayStart.AddDate(0, 0, 1), Day(r.Time)
		}
		k := tenantDay{r.Tenant, day}
		if k.day < oldest {
			continue
		}
		d := m.days[k]
		if d == nil {
			d = &dayUsage{}
			m.days[k] = d
		}
		d.Add(r)
		name, ok := Breakdown(r)
		if !ok {
			continue
		}
		if d.models == nil {
			d.models = map[string]*Totals{}
		}
		t := d.models[name]
		if t == nil && len(d.models) >= maxModels {
			name = OtherModel
			t = d.models[name]
		}
		if t == nil {
			t = &Totals{}
			d.models[name] = t
		}
		t.Add(r)
	}
	return nil
}

// Usage returns tenant's usage on the UTC days from from through to; ErrRange when they are
// more than MaxDays.
func (m *Memory) Usage(_ context.Context, tenant string, from, to time.Time) (*Report, error) {
	if err := CheckRange(from, to); err != nil {
		return nil, err
	}
	days := map[string]*Totals{}
	models := map[string]map[string]*Totals{}
	m.mu.Lock()
	for _, day := range Days(from, to) {
		d := m.days[tenantDay{tenant, day}]
		if d == nil {
			continue
		}
		t := d.Totals
		days[day] = &t
		ms := make(map[string]*Totals, len(d.models))
		for name, mt := range d.models {
			c := *mt
			ms[name] = &c
		}
		models[day] = ms
	}
	m.mu.Unlock()
	return NewReport(tenant, from, to, days, models), nil
}
