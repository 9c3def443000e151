package httptools_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/httptools"
)

func TestParse(t *testing.T) {
	raw := `[
		{"name":"get_balance","description":"Balance.","parameters":{"type":"object","properties":{"account":{"type":"string"}}},
		 "method":"GET","path":"/balance","status":"Checking your balance","timeout":"5s"},
		{"name":"transfer","method":"POST","path":"/v1/transfers","timeout":2.5,"action":true},
		{"name":"Remove-Card_2","method":"DELETE","path":"/cards/","parameters":null,"timeout":null}
	]`
	got, err := httptools.Parse(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := []httptools.Definition{
		{Name: "get_balance", Description: "Balance.", Parameters: json.RawMessage(`{"type":"object","properties":{"account":{"type":"string"}}}`),
			Method: "GET", Path: "/balance", Status: "Checking your balance", Timeout: engine.Duration(5 * time.Second)},
		{Name: "transfer", Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
			Method: "POST", Path: "/v1/transfers", Timeout: engine.Duration(2500 * time.Millisecond), Action: true},
		{Name: "Remove-Card_2", Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Method: "DELETE", Path: "/cards/"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", got, want)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, raw := range []string{"", "null", " \n", "[]"} {
		defs, err := httptools.Parse(json.RawMessage(raw))
		if err != nil || len(defs) != 0 {
			t.Errorf("Parse(%q) = %v, %v; want no tools", raw, defs, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	const ok = `{"name":"t","method":"GET","path":"/t"}`
	tests := []struct {
		name string
		raw  string
		want []string // what the error must say, each naming its field
	}{
		{"not an array", `{"name":"t"}`, []string{"tools: must be a JSON array"}},
		{"not JSON", `[`, []string{"tools: must be a JSON array"}},
		{"item not an object", `[` + ok + `, "get_balance"]`, []string{"tools[1]: must be an object"}},
		{"path without slash", `[` + ok + `, {"name":"u","method":"GET","path":"balance"}]`, []string{"tools[1].path: must start with /"}},
		{"path with query", `[{"name":"t","method":"GET","path":"/t?x=1"}]`, []string{"tools[0].path: must be a plain path"}},
		{"path scheme-relative", `[{"name":"t","method":"GET","path":"//evil.example/t"}]`, []string{"tools[0].path: must be a plain path"}},
		{"missing path", `[{"name":"t","method":"GET"}]`, []string{"tools[0].path: must start with /"}},
		{"bad name", `[{"name":"get balance","method":"GET","path":"/t"}]`, []string{"tools[0].name: must be 1 to 64"}},
		{"empty name", `[{"method":"GET","path":"/t"}]`, []string{"tools[0].name: must be 1 to 64"}},
		{"long name", `[{"name":"` + strings.Repeat("a", 65) + `","method":"GET","path":"/t"}]`, []string{"tools[0].name: must be 1 to 64"}},
		{"duplicate name", `[` + ok + `,` + ok + `]`, []string{`tools[1].name: "t" is already the name of tools[0]`}},
		{"bad method", `[{"name":"t","method":"get","path":"/t"}]`, []string{"tools[0].method: must be GET, POST, PUT, PATCH or DELETE"}},
		{"missing method", `[{"name":"t","path":"/t"}]`, []string{"tools[0].method: must be"}},
		{"parameters not an object", `[{"name":"t","method":"GET","path":"/t","parameters":[]}]`, []string{"tools[0].parameters: must be a JSON Schema object"}},
		{"parameters type", `[{"name":"t","method":"GET","path":"/t","parameters":{"type":"string"}}]`, []string{`tools[0].parameters.type: must be "object"`}},
		{"parameters without type", `[{"name":"t","method":"GET","path":"/t","parameters":{"properties":{}}}]`, []string{`tools[0].parameters.type: must be "object"`}},
		{"bad timeout", `[{"name":"t","method":"GET","path":"/t","timeout":"5 seconds"}]`, []string{"tools[0].timeout: "}},
		{"negative timeout", `[{"name":"t","method":"GET","path":"/t","timeout":"-1s"}]`, []string{"tools[0].timeout: must not be negative"}},
		{"name not a string", `[{"name":7,"method":"GET","path":"/t"}]`, []string{"tools[0].name: must be a string"}},
		{"action not a bool", `[{"name":"t","method":"GET","path":"/t","action":"yes"}]`, []string{"tools[0].action: must be true or false"}},
		{"unknown field", `[{"name":"t","method":"GET","path":"/t","url":"http://x"}]`, []string{`tools[0]: unknown field "url"`}},
		{"every mistake", `[{"name":"","method":"GET","path":"t"},{"name":"u","method":"HEAD","path":"/u"}]`,
			[]string{"tools[0].name:", "tools[0].path:", "tools[1].method:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defs, err := httptools.Parse(json.RawMessage(tt.raw))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", defs)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`[{"name":"get_balance","method":"GET","path":"/balance","parameters":{"type":"object"},"timeout":"5s"}]`)
	f.Add(`[{"name":"t","method":"POST","path":"/t","action":true,"timeout":3}]`)
	f.Add(`[{"name":"t"},{"name":"t"}]`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, raw string) {
		defs, err := httptools.Parse(json.RawMessage(raw))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, d := range defs {
			if seen[d.Name] || d.Name == "" || !strings.HasPrefix(d.Path, "/") || d.Timeout < 0 || !json.Valid(d.Parameters) {
				t.Fatalf("Parse accepted %+v", d)
			}
			seen[d.Name] = true
		}
	})
}
