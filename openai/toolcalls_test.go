package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/convengine/engine"
)

// TestToolCallAssembly feeds the accumulator the tool_calls arrays of successive chunks and
// checks the calls it assembles.
func TestToolCallAssembly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string // each a chunk's tool_calls array
		want   string
		err    error
	}{
		{"OpenAI pieces by index", []string{
			`[{"index":0,"id":"a","type":"function","function":{"name":"get_balance","arguments":""}}]`,
			`[{"index":0,"function":{"arguments":"{\"acc"}}]`,
			`[{"index":0,"function":{"arguments":"ount\":\"checking\"}"}}]`,
			`[{"index":1,"id":"b","type":"function","function":{"name":"show_stat","arguments":"{}"}}]`,
		}, `a get_balance {"account":"checking"}; b show_stat {}`, nil},
		{"whole call, arguments an object, no index, no id", []string{
			`[{"function":{"name":"get_balance","arguments":{"account":"checking"}}}]`,
		}, `call_0_0 get_balance {"account":"checking"}`, nil},
		{"index -1 and indexes from 1", []string{
			`[{"index":-1,"id":"a","function":{"name":"get_balance","arguments":"{}"}}]`,
			`[{"index":1,"id":"b","function":{"name":"show_stat","arguments":"{\"label\""}}]`,
			`[{"index":1,"function":{"arguments":":\"x\",\"value\":\"1\"}"}}]`,
		}, `a get_balance {}; b show_stat {"label":"x","value":"1"}`, nil},
		{"parallel calls all at index 0, with ids", []string{
			`[{"index":0,"id":"a","function":{"name":"get_balance","arguments":"{}"}}]`,
			`[{"index":0,"id":"b","function":{"name":"get_savings_goal","arguments":"{}"}}]`,
		}, `a get_balance {}; b get_savings_goal {}`, nil},
		{"parallel calls all at index 0, without ids", []string{
			`[{"index":0,"function":{"name":"get_balance","arguments":"{}"}}]`,
			`[{"index":0,"function":{"name":"get_savings_goal","arguments":"{}"}}]`,
			`[{"index":0,"function":{"name":"get_savings_goal","arguments":"{\"id\":2}"}}]`,
		}, `call_0_0 get_balance {}; call_1_0 get_savings_goal {}; call_2_0 get_savings_goal {"id":2}`, nil},
		{"several index-less calls in one array", []string{
			`[{"function":{"name":"get_balance","arguments":"{}"}},{"function":{"name":"get_savings_goal","arguments":"{}"}}]`,
		}, `call_0_0 get_balance {}; call_1_0 get_savings_goal {}`, nil},
		{"the name repeated in every delta", []string{
			`[{"index":0,"id":"a","type":"function","function":{"name":"show_stat","arguments":"{\"label\":"}}]`,
			`[{"index":0,"id":"a","type":"function","function":{"name":"show_stat","arguments":"\"x\",\"value\":"}}]`,
			`[{"index":0,"id":"a","type":"function","function":{"name":"show_stat","arguments":"\"1\"}"}}]`,
		}, `a show_stat {"label":"x","value":"1"}`, nil},
		{"the same id for two calls", []string{
			`[{"index":0,"id":"a","function":{"name":"get_balance","arguments":"{}"}}]`,
			`[{"index":0,"id":"a","function":{"name":"get_balance","arguments":"{\"account\":\"savings\"}"}}]`,
		}, `a get_balance {}; call_1_0 get_balance {"account":"savings"}`, nil},
		{"a new id with every piece of one call, the name empty after the first", []string{
			`[{"id":"chatcmpl-tool-a91e","function":{"arguments":"","name":"get_weather"},"type":"function","index":0}]`,
			`[{"id":"call_b49e","function":{"arguments":"{\"city\": \"","name":""},"type":"function","index":0}]`,
			`[{"id":"call_ed82","function":{"arguments":"Paris\"}","name":""},"type":"function","index":0}]`,
		}, `chatcmpl-tool-a91e get_weather {"city": "Paris"}`, nil},
		{"the same id on every piece, index 0 for two calls", []string{
			`[{"index":0,"id":"0","type":"function","function":{"name":"get_balance","arguments":""}}]`,
			`[{"index":0,"id":"0","type":"function","function":{"arguments":"{}"}}]`,
			`[{"index":0,"id":"1","type":"function","function":{"name":"get_savings_goal","arguments":""}}]`,
			`[{"index":0,"id":"","type":"function","function":{"arguments":"{}"}}]`,
		}, `0 get_balance {}; 1 get_savings_goal {}`, nil},
		{"fragments, then the arguments again whole", []string{
			`[{"index":0,"id":"a","type":"function","function":{"name":"transfer","arguments":""}}]`,
			`[{"index":0,"function":{"arguments":"{\"amount\": 300, \"to\": "}}]`,
			`[{"id":null,"type":null,"index":0,"function":{"name":null,"arguments":"{\"amount\": 300, \"to\": \"Alex\"}"}}]`,
		}, `a transfer {"amount": 300, "to": "Alex"}`, nil},
		{"the id inside function, the name in every piece", []string{
			`[{"index":0,"function":{"name":"show_stat","id":"x1","arguments":"{\"label\":\"a\","}}]`,
			`[{"index":0,"function":{"name":"show_stat","arguments":"\"value\":\"1\"}"}}]`,
		}, `call_0_0 show_stat {"label":"a","value":"1"}`, nil},
		{"empty and null arguments", []string{
			`[{"index":0,"id":"a","function":{"name":"get_balance","arguments":""}},{"index":1,"id":"b","function":{"name":"get_savings_goal","arguments":null}}]`,
		}, `a get_balance {}; b get_savings_goal {}`, nil},
		{"arguments that never become JSON", []string{
			`[{"index":0,"id":"a","function":{"name":"transfer","arguments":"{\"amount\": 20"}}]`,
		}, ``, ErrBadToolCall},
		{"arguments that are a list", []string{
			`[{"index":0,"id":"a","function":{"name":"transfer","arguments":"[1]"}}]`,
		}, ``, ErrBadToolCall},
		{"arguments of another type", []string{
			`[{"index":0,"id":"a","function":{"name":"transfer","arguments":42}}]`,
		}, ``, ErrBadToolCall},
		{"a call without a name", []string{
			`[{"index":0,"id":"a","function":{"arguments":"{}"}}]`,
		}, ``, ErrBadToolCall},
		{"not a function", []string{
			`[{"index":0,"id":"a","type":"custom","function":{"name":"x","arguments":"{}"}}]`,
		}, ``, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a toolCalls
			var err error
			for _, c := range tc.chunks {
				var ds []toolDelta
				if err := json.Unmarshal([]byte(c), &ds); err != nil {
					t.Fatal(err)
				}
				for i := range ds {
					if err = a.add(&ds[i]); err != nil {
						break
					}
				}
			}
			var got []string
			if err == nil {
				calls, e := a.events()
				err = e
				for _, c := range calls {
					got = append(got, c.ID+" "+c.Name+" "+string(c.Arguments))
				}
			}
			if strings.Join(got, "; ") != tc.want || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Errorf("got %q, %v; want %q, %v", strings.Join(got, "; "), err, tc.want, tc.err)
			}
		})
	}
}

// TestToolCallBounds: a flood of calls, or of arguments, breaks the completion.
func TestToolCallBounds(t *testing.T) {
	var a toolCalls
	var err error
	for i := 0; i <= maxToolCalls && err == nil; i++ {
		d := toolDelta{ID: strings.Repeat("x", i+1)}
		d.Function.Name = "get_balance"
		err = a.add(&d)
	}
	if !errors.Is(err, ErrBadToolCall) {
		t.Errorf("%d calls: %v", len(a.calls), err)
	}
	a = toolCalls{}
	piece, _ := json.Marshal(strings.Repeat("a", 64<<10))
	d := toolDelta{ID: "a"}
	d.Function.Name, d.Function.Arguments = "x", piece
	for i := 0; i < 20 && err == nil; i++ {
		err = a.add(&d)
	}
	if !errors.Is(err, ErrBadToolCall) {
		t.Errorf("a megabyte of arguments: %v", err)
	}
}

// TestSpeechFilter: reasoning and tool calls written as text are never spoken, however the
// deltas cut their tags; the rest is spoken as it came.
func TestSpeechFilter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		deltas []string
		said   string
		calls  string
	}{
		{"plain", []string{"Your balance ", "is $1,234.56."}, "Your balance is $1,234.56.", ""},
		{"a less-than sign", []string{"a <", " b and c<", "d"}, "a < b and c<d", ""},
		{"reasoning first", []string{"<think>", "The user wants", " the balance.</think>", "\n\nYour balance is $1."}, "Your balance is $1.", ""},
		{"tags cut across deltas", []string{"<thi", "nk>secret</th", "ink>Hi", " <", "thin", "k>more</think>there."}, "Hi there.", ""},
		{"only the closing tag", []string{"reasoning the server did not mark", "</think>", "Hello."}, "reasoning the server did not markHello.", ""},
		{"a tool call written as text", []string{"Let me check.", "<tool_call>\n{\"name\": \"get_balance\", ", "\"arguments\": {}}\n</tool_call>"}, "Let me check.", `get_balance {}`},
		{"two tool calls as text", []string{`<tool_call>{"name":"show_stat","arguments":{"label":"x","value":"1"}}</tool_call><tool_call>{"name":"set_suggestions","parameters":{"suggestions":[]}}</tool_call>`}, "", `show_stat {"label":"x","value":"1"}; set_suggestions {"suggestions":[]}`},
		{"reasoning never closed", []string{"<think>forever"}, "", ""},
		{"a tool call that is not JSON", []string{"<tool_call>nonsense</tool_call>Done."}, "Done.", ""},
		{"a list of tool calls as text", []string{`<tool_call>[{"name": "get_balance", "arguments": {}}, {"name": "show_stat", "arguments": {"label":"x","value":"1"}}]</tool_call>`}, "", `get_balance {}; show_stat {"label":"x","value":"1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f speechFilter
			var said strings.Builder
			for _, d := range tc.deltas {
				said.WriteString(f.write(d))
			}
			said.WriteString(f.flush())
			var calls []string
			for _, c := range f.calls {
				calls = append(calls, c.Function.Name+" "+string(c.Function.Arguments))
			}
			if said.String() != tc.said || strings.Join(calls, "; ") != tc.calls {
				t.Errorf("said %q calls %q, want %q and %q", said.String(), strings.Join(calls, "; "), tc.said, tc.calls)
			}
		})
	}
}

// FuzzStreamReader feeds the stream reader arbitrary bodies. It never panics; it either ends the
// completion with tool calls whose arguments are JSON objects and one finish, or fails with an
// error of a kind the engine turns into its model error; and it never speaks a reasoning or
// tool-call tag. Its usage is either reported, each count from 0 to 10 million, or not, all zero.
func FuzzStreamReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"x\",\"arguments\":\"{}\"}}]}}]}\n\n",
		"data: : keepalive\n\ndata:\n\ndata: null\n\n: comment\r\nevent: x\r\ndata:{\"choices\":[],\"error\":null}\r\n\r\n",
		"error: {\"code\":400,\"message\":\"too long\",\"type\":\"invalid_request_error\"}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"<think>x</think>Hi<tool_call>{\\\"name\\\":\\\"y\\\",\\\"arguments\\\":{}}</tool_call>\"}}]}\n\n",
		"data: \x00\xff\n\n",
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,\"completion_tokens_details\":{\"reasoning_tokens\":2}},\"x_groq\":{\"usage\":{}}}\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var (
			text     strings.Builder
			finishes int
			late     bool
		)
		c := &completion{yield: func(ev engine.ModelEvent, err error) bool {
			late = late || finishes > 0
			switch ev.Kind {
			case engine.EventText:
				text.WriteString(ev.Text)
			case engine.EventToolCall:
				if !json.Valid(ev.ToolCall.Arguments) || ev.ToolCall.Arguments[0] != '{' || ev.ToolCall.ID == "" || ev.ToolCall.Name == "" {
					t.Fatalf("call %+v", ev.ToolCall)
				}
			case engine.EventFinish:
				finishes++
				u := ev.Usage
				counts := []int{u.InputTokens, u.OutputTokens, u.CachedTokens, u.ReasoningTokens}
				if !u.Reported && slices.ContainsFunc(counts, func(n int) bool { return n != 0 }) ||
					slices.ContainsFunc(counts, func(n int) bool { return n < 0 || n > maxTokens }) {
					t.Fatalf("usage %+v", u)
				}
			}
			return true
		}}
		err := c.readStream(bytes.NewReader(body), func() {})
		if err == nil {
			err = c.end()
		}
		var se *StreamError
		switch {
		case err == nil && finishes != 1:
			t.Fatalf("%d finishes", finishes)
		case err != nil && !errors.Is(err, ErrBadStream) && !errors.Is(err, ErrBadToolCall) && !errors.Is(err, ErrStreamCut) && !errors.As(err, &se):
			t.Fatalf("error %v", err)
		case late:
			t.Fatal("an event after the finish")
		}
		for _, tag := range []string{thinkOpen, thinkClose, toolCallOpen, toolCallClose} {
			if strings.Contains(text.String(), tag) {
				t.Fatalf("spoke %q", text.String())
			}
		}
	})
}
