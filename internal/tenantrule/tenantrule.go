// Package tenantrule holds the rules of a tenant's configuration that need no Tenant: the
// shapes of its key, model name, device check path and backend URLs, its AI disclosure lines,
// how its durations are written, and the ranges of its limits, named by their JSON fields. The root's Tenant.Validate applies
// them and names the fields at fault.
package tenantrule

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convengine/engine/internal/locale"
)

var (
	keyPattern   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	modelPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
)

// Key reports whether s can be an engine key: 1 to 128 letters, digits, '_', '.' or '-'.
func Key(s string) bool { return keyPattern.MatchString(s) }

// Model reports whether s can name a model: 1 to 64 letters, digits, '_', '.' or '-'.
func Model(s string) bool { return modelPattern.MatchString(s) }

// DeviceCheck reports whether path can be a backend's device check: a path of at most 256
// bytes, without query or fragment.
func DeviceCheck(path string) bool {
	return strings.HasPrefix(path, "/") && !strings.ContainsAny(path, "?#") && len(path) <= 256
}

// BackendURL reports whether s is an absolute http or https URL.
func BackendURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// Disclosure reports whether tag is a BCP 47 language tag and line a line of 1 to 500
// characters.
func Disclosure(tag, line string) bool {
	return locale.Valid(tag) && strings.TrimSpace(line) != "" && utf8.RuneCountInString(line) <= 500
}

// MaxTokens is the most tokens a tenant's day or month may have, which a budget's remaining
// tokens are also cut to.
const MaxTokens = 1_000_000_000_000_000

// limits are the ranges of a tenant's limits, in the order their faults are reported. Each
// lower bound is 0, its default or no limit (max_steps's 0 is its default, 1 the least it can
// be). The bounds keep every reservation and count of a budget exact, in an int64 and in a
// Redis script's numbers.
var limits = []struct {
	field    string
	low, top int64
	duration bool
}{
	{field: "max_steps", low: 1, top: 32},
	{field: "max_output_tokens", top: 1_000_000},
	{field: "tokens_per_day", top: MaxTokens},
	{field: "tokens_per_month", top: MaxTokens},
	{field: "turns_per_user_per_day", top: 1_000_000},
	{field: "user_per_minute", top: 1_000_000_000},
	{field: "user_burst", top: 1_000_000_000},
	{field: "tenant_per_minute", top: 1_000_000_000},
	{field: "tenant_burst", top: 1_000_000_000},
	{field: "speech_seconds_per_day", top: 1_000_000_000},
	{field: "tool_timeout", top: int64(10 * time.Minute), duration: true},
	{field: "turn_timeout", top: int64(time.Hour), duration: true},
	{field: "action_ttl", top: int64(24 * time.Hour), duration: true},
	{field: "verification_max_age", top: int64(time.Hour), duration: true},
}

// Limits reports, through bad, each limit of l outside its range, naming it "limits.<field>".
// l points to a struct whose fields carry the limits' JSON names in their tags: integers,
// durations as integers of nanoseconds, and seconds as a float.
func Limits(l any, bad func(field, format string, args ...any)) {
	v := reflect.ValueOf(l).Elem()
	fields := make(map[string]reflect.Value, v.NumField())
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		fields[name] = v.Field(i)
	}
	for _, r := range limits {
		f, field := fields[r.field], "limits."+r.field
		switch {
		case f.CanFloat():
			if x := f.Float(); !(x >= 0 && x <= float64(r.top)) { // NaN too
				bad(field, "must be from %d to %d", r.low, r.top)
			}
		case f.Int() >= 0 && f.Int() <= r.top:
		case r.duration:
			bad(field, "must be from 0 to %v", time.Duration(r.top))
		default:
			bad(field, "must be from %d to %d", r.low, r.top)
		}
	}
}

// ParseDuration reads a duration of a configuration file: a string such as "10s" or "1m30s",
// or a number of seconds.
func ParseDuration(b []byte) (time.Duration, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var secs float64
		if err := json.Unmarshal(b, &secs); err != nil {
			return 0, fmt.Errorf("duration must be a string such as \"10s\" or a number of seconds")
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", s, err)
	}
	return v, nil
}
