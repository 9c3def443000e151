package tenantrule

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

type tenantLimits struct {
	ToolTimeout         time.Duration `json:"tool_timeout,omitempty"`
	TurnTimeout         time.Duration `json:"turn_timeout,omitempty"`
	MaxSteps            int           `json:"max_steps,omitempty"`
	ActionTTL           time.Duration `json:"action_ttl,omitempty"`
	VerificationMaxAge  time.Duration `json:"verification_max_age,omitempty"`
	UserPerMinute       int           `json:"user_per_minute,omitempty"`
	UserBurst           int           `json:"user_burst,omitempty"`
	TenantPerMinute     int           `json:"tenant_per_minute,omitempty"`
	TenantBurst         int           `json:"tenant_burst,omitempty"`
	MaxOutputTokens     int           `json:"max_output_tokens,omitempty"`
	TokensPerDay        int64         `json:"tokens_per_day,omitempty"`
	TokensPerMonth      int64         `json:"tokens_per_month,omitempty"`
	SpeechSecondsPerDay float64       `json:"speech_seconds_per_day,omitempty"`
	TurnsPerUserPerDay  int           `json:"turns_per_user_per_day,omitempty"`
}

func faults(l *tenantLimits) []string {
	var out []string
	Limits(l, func(field, format string, args ...any) {
		out = append(out, field+": "+fmt.Sprintf(format, args...))
	})
	return out
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name string
		l    tenantLimits
		want []string
	}{
		{"zero", tenantLimits{}, nil},
		{"tops", tenantLimits{MaxSteps: 32, MaxOutputTokens: 1_000_000, TokensPerDay: 1e15, SpeechSecondsPerDay: 1e9,
			ToolTimeout: 10 * time.Minute, ActionTTL: 24 * time.Hour}, nil},
		{"max_steps", tenantLimits{MaxSteps: 33}, []string{"limits.max_steps: must be from 1 to 32"}},
		{"negative", tenantLimits{UserBurst: -1}, []string{"limits.user_burst: must be from 0 to 1000000000"}},
		{"tokens", tenantLimits{TokensPerMonth: math.MaxInt64}, []string{"limits.tokens_per_month: must be from 0 to 1000000000000000"}},
		{"speech NaN", tenantLimits{SpeechSecondsPerDay: math.NaN()}, []string{"limits.speech_seconds_per_day: must be from 0 to 1000000000"}},
		{"durations", tenantLimits{TurnTimeout: 2 * time.Hour, VerificationMaxAge: -time.Second},
			[]string{"limits.turn_timeout: must be from 0 to 1h0m0s", "limits.verification_max_age: must be from 0 to 1h0m0s"}},
		{"in order", tenantLimits{ToolTimeout: time.Hour, MaxSteps: -1},
			[]string{"limits.max_steps: must be from 1 to 32", "limits.tool_timeout: must be from 0 to 10m0s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := faults(&tt.l); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("faults = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestShapes(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"key", Key("pk_demo") && !Key("") && !Key("pk demo") && !Key(strings.Repeat("k", 129))},
		{"model", Model("gpt-4.1") && !Model("a/b") && !Model(strings.Repeat("m", 65))},
		{"device check", DeviceCheck("/devices/check") && !DeviceCheck("devices") && !DeviceCheck("/d?x=1") && !DeviceCheck("/"+strings.Repeat("d", 256))},
		{"backend", BackendURL("https://bank.example/api") && !BackendURL("ftp://bank.example") && !BackendURL("/api") && !BackendURL("http://")},
		{"disclosure", Disclosure("es-MX", "Hablas con una IA.") && !Disclosure("es-MX", " ") && !Disclosure("not a tag", "x") && !Disclosure("en", strings.Repeat("a", 501))},
	} {
		if !c.ok {
			t.Errorf("%s: a rule answered wrongly", c.name)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		json string
		want time.Duration
		err  string
	}{
		{`"10s"`, 10 * time.Second, ""},
		{`"1m30s"`, 90 * time.Second, ""},
		{`2.5`, 2500 * time.Millisecond, ""},
		{`"ten seconds"`, 0, `duration "ten seconds": `},
		{`true`, 0, "duration must be a string such as \"10s\" or a number of seconds"},
	} {
		got, err := ParseDuration([]byte(tc.json))
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseDuration(%s) = %v, %v; want %v", tc.json, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("ParseDuration(%s) = %v; want an error starting %q", tc.json, err, tc.err)
		}
	}
}
