package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/convengine/engine/usage"
)

// usageScript adds a batch of a tenant's usage to its hashes, once: KEYS[1] marks the batch
// as written (for ARGV[1] ms), so that the same batch written again after a failure whose
// answer was lost is not counted twice; KEYS[2..] are the hashes, each expiring at ARGV[2..]
// (ms of the Unix epoch). The other ARGV come in fours: the index of a key in KEYS, "i" or
// "f" (HINCRBY or HINCRBYFLOAT), the field and the increment.
const usageScript = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
local i = #KEYS + 1
while i <= #ARGV do
  local k = KEYS[tonumber(ARGV[i])]
  if ARGV[i+1] == 'f' then
    redis.call('HINCRBYFLOAT', k, ARGV[i+2], ARGV[i+3])
  else
    redis.call('HINCRBY', k, ARGV[i+2], ARGV[i+3])
  end
  i = i + 4
end
for j = 2, #KEYS do redis.call('PEXPIREAT', KEYS[j], ARGV[j]) end
return 1
`

// batchMemory is how long a written batch is remembered: longer than the meter retries one.
const batchMemory = 24 * time.Hour

// UsageLedger is a usage ledger in Redis, shared by every replica: a [usage.Sink] that adds
// records to one hash per tenant and UTC day (and one per tenant and day for its models), with
// HINCRBY and HINCRBYFLOAT, and the [usage.Reader] of those hashes. Its keys hold the tenant
// as their Redis Cluster hash tag, and expire the retention after their day ends. A batch is
// counted once, even written again after a failure whose answer was lost. Its methods are safe
// for concurrent use.
//
// Unlike [usage.Memory], it does not bound the models told apart per day: their names come
// from the model servers the operator configured.
type UsageLedger struct {
	s         *Store
	retention time.Duration
	script    *redis.Script
}

var (
	_ usage.Sink   = (*UsageLedger)(nil)
	_ usage.Reader = (*UsageLedger)(nil)
)

// NewUsageLedger returns the usage ledger of s, keeping each day for retention after it ends
// (0 means usage.DefaultRetention).
func NewUsageLedger(s *Store, retention time.Duration) *UsageLedger {
	if retention <= 0 {
		retention = usage.DefaultRetention
	}
	return &UsageLedger{s: s, retention: retention, script: redis.NewScript(usageScript)}
}

// usageKey returns the key of tenant's hash of day, or of its models with the suffix
// ":models". The tenant is the hash tag: every key of a tenant lands in one slot.
func (l *UsageLedger) usageKey(tenant, rest string) string {
	return l.s.prefix + "usage:{" + tenant + "}:" + rest
}

// usageFields lists the fields of t, by their names in the report, for hashes.
func usageFields(t *usage.Totals) (ints map[string]*int64, floats map[string]*float64) {
	return map[string]*int64{
			"input_tokens": &t.InputTokens, "cached_input_tokens": &t.CachedInputTokens, "output_tokens": &t.OutputTokens,
			"reasoning_tokens": &t.ReasoningTokens, "estimated_tokens": &t.EstimatedTokens, "model_calls": &t.ModelCalls,
			"warmup_calls": &t.WarmupCalls, "retries": &t.Retries, "turns": &t.Turns, "tool_calls": &t.ToolCalls,
			"tool_errors": &t.ToolErrors, "speech_out_characters": &t.SpeechOutCharacters,
		}, map[string]*float64{
			"speech_in_seconds": &t.SpeechInSeconds, "speech_out_seconds": &t.SpeechOutSeconds,
		}
}

// WriteUsage adds records to their tenants' hashes: one script per tenant, atomic. When Redis
// does not answer, the error wraps [ErrUnavailable], and the tenants already written are
// counted once when the meter writes the batch again.
func (l *UsageLedger) WriteUsage(ctx context.Context, records []usage.Record) error {
	byTenant := map[string][]usage.Record{}
	for _, r := range records {
		byTenant[r.Tenant] = append(byTenant[r.Tenant], r)
	}
	for _, tenant := range slices.Sorted(maps.Keys(byTenant)) {
		if err := l.writeTenant(ctx, tenant, byTenant[tenant]); err != nil {
			return err
		}
	}
	return nil
}

func (l *UsageLedger) writeTenant(ctx context.Context, tenant string, records []usage.Record) error {
	raw, err := json.Marshal(records)
	if err != nil {
		return fmt.Errorf("redisstore: writing usage: %w", err)
	}
	sum := sha256.Sum256(raw)
	type hash struct {
		key    string
		expiry int64 // ms of the Unix epoch
		totals map[string]*usage.Totals
	}
	keys := []string{l.usageKey(tenant, "batch:"+hex.EncodeToString(sum[:16]))}
	argv := []any{batchMemory.Milliseconds()}
	index := map[string]int{} // a hash's key, its index in KEYS from 1
	var hashes []*hash
	get := func(key string, day time.Time) *hash {
		if i, ok := index[key]; ok {
			return hashes[i-2]
		}
		h := &hash{key: key, expiry: day.AddDate(0, 0, 1).Add(l.retention).UnixMilli(), totals: map[string]*usage.Totals{}}
		hashes = append(hashes, h)
		keys = append(keys, key)
		index[key] = len(keys)
		return h
	}
	add := func(h *hash, prefix string, r *usage.Record) {
		t := h.totals[prefix]
		if t == nil {
			t = &usage.Totals{}
			h.totals[prefix] = t
		}
		t.Add(r)
	}
	for i := range records {
		r := &records[i]
		day := r.Time.UTC().Truncate(24 * time.Hour)
		name := day.Format(time.DateOnly)
		add(get(l.usageKey(tenant, name), day), "", r)
		if model, ok := usage.Breakdown(r); ok {
			// Model fields are "<field>/<model>": a field's name has no slash.
			add(get(l.usageKey(tenant, name+":models"), day), "/"+model, r)
		}
	}
	for _, h := range hashes {
		argv = append(argv, h.expiry)
	}
	for _, h := range hashes {
		for _, suffix := range slices.Sorted(maps.Keys(h.totals)) {
			ints, floats := usageFields(h.totals[suffix])
			for _, f := range slices.Sorted(maps.Keys(ints)) {
				if v := *ints[f]; v != 0 {
					argv = append(argv, index[h.key], "i", f+suffix, v)
				}
			}
			for _, f := range slices.Sorted(maps.Keys(floats)) {
				if v := *floats[f]; v != 0 {
					argv = append(argv, index[h.key], "f", f+suffix, strconv.FormatFloat(v, 'f', -1, 64))
				}
			}
		}
	}
	_, err = do(ctx, l.s, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, l.script.Run(ctx, l.s.client, keys, argv...).Err()
	})
	if err != nil {
		return unavailable("writing usage", err)
	}
	return nil
}

// Usage reads tenant's hashes of the UTC days from from through to, in one round trip.
func (l *UsageLedger) Usage(ctx context.Context, tenant string, from, to time.Time) (*usage.Report, error) {
	if err := usage.CheckRange(from, to); err != nil {
		return nil, err
	}
	dayNames := usage.Days(from, to)
	cmds, err := do(ctx, l.s, func(ctx context.Context) ([]redis.Cmder, error) {
		return l.s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, d := range dayNames {
				p.HGetAll(ctx, l.usageKey(tenant, d))
				p.HGetAll(ctx, l.usageKey(tenant, d+":models"))
			}
			return nil
		})
	})
	if err != nil {
		return nil, unavailable("reading usage", err)
	}
	days := map[string]*usage.Totals{}
	models := map[string]map[string]*usage.Totals{}
	for i, d := range dayNames {
		total, err := cmds[2*i].(*redis.MapStringStringCmd).Result()
		if err != nil {
			return nil, unavailable("reading usage", err)
		}
		byModel, err := cmds[2*i+1].(*redis.MapStringStringCmd).Result()
		if err != nil {
			return nil, unavailable("reading usage", err)
		}
		t := &usage.Totals{}
		if err := setFields(t, total, ""); err != nil {
			return nil, err
		}
		days[d] = t
		ms := map[string]*usage.Totals{}
		for field := range byModel {
			_, model, ok := strings.Cut(field, "/")
			if !ok || ms[model] != nil {
				continue
			}
			mt := &usage.Totals{}
			if err := setFields(mt, byModel, "/"+model); err != nil {
				return nil, err
			}
			ms[model] = mt
		}
		models[d] = ms
	}
	return usage.NewReport(tenant, from, to, days, models), nil
}

// setFields sets the fields of t from a hash's, named with suffix.
func setFields(t *usage.Totals, hash map[string]string, suffix string) error {
	ints, floats := usageFields(t)
	for f, p := range ints {
		if v, ok := hash[f+suffix]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("redisstore: reading usage: %s: %w", f, ErrUnreadable)
			}
			*p = n
		}
	}
	for f, p := range floats {
		if v, ok := hash[f+suffix]; ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("redisstore: reading usage: %s: %w", f, ErrUnreadable)
			}
			*p = n
		}
	}
	return nil
}
