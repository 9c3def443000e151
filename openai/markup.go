package openai

import (
	"encoding/json"
	"strings"
)

// Tags some servers leave in a completion's text: reasoning (LM Studio, llama.cpp and vLLM
// without a reasoning parser) and tool calls written as text (vLLM without a tool-call parser,
// in the Hermes format).
const (
	thinkOpen     = "<think>"
	thinkClose    = "</think>"
	toolCallOpen  = "<tool_call>"
	toolCallClose = "</tool_call>"
)

// speechFilter keeps what is not meant to be heard out of the text a completion streams: the
// reasoning between <think> and </think> is dropped, and a tool call written between
// <tool_call> and </tool_call> is taken out and handed over as a call. A tag may be split across
// deltas: the end of a delta that could begin one is held back until the next delta tells.
// White space is held back until more is said after it, so that an answer does not start or
// end with the blank lines around its reasoning or its tool calls.
type speechFilter struct {
	held    string // the end of the last delta, which could begin a tag
	closing string // the tag that ends the block being read: thinkClose, toolCallClose or ""
	body    strings.Builder
	calls   []toolDelta // tool calls read from the text
	said    bool
	space   string // white space held back
}

// write filters one delta and returns the text to speak of it.
func (f *speechFilter) write(delta string) string {
	if f.held == "" && f.closing == "" && strings.IndexByte(delta, '<') < 0 {
		return f.speak(delta) // the usual delta: no tag can start in it
	}
	s := f.held + delta
	f.held = ""
	var out strings.Builder
	for s != "" {
		if f.closing != "" {
			i := strings.Index(s, f.closing)
			if i < 0 {
				keep := partialTag(s, f.closing)
				f.inside(s[:len(s)-keep])
				f.held = s[len(s)-keep:]
				break
			}
			f.inside(s[:i])
			s = s[i+len(f.closing):]
			f.endBlock()
			continue
		}
		i, tag := firstTag(s)
		if i < 0 {
			keep := 0
			for _, t := range tags {
				keep = max(keep, partialTag(s, t))
			}
			out.WriteString(s[:len(s)-keep])
			f.held = s[len(s)-keep:]
			break
		}
		out.WriteString(s[:i])
		s = s[i+len(tag):]
		switch tag {
		case thinkOpen:
			f.closing = thinkClose
		case toolCallOpen:
			f.closing = toolCallClose
		}
		// A lone closing tag goes: </think> ends reasoning whose opening tag was in the prompt.
	}
	return f.speak(out.String())
}

// flush ends the text: what was held back is said, unless it is inside a block or white space.
func (f *speechFilter) flush() string {
	held := f.held
	f.held = ""
	if f.closing != "" {
		f.inside(held)
		f.endBlock()
		return ""
	}
	return f.speak(held)
}

// speak returns s to say, without the white space at its end, which waits for what follows.
func (f *speechFilter) speak(s string) string {
	body := strings.TrimRight(s, " \t\r\n")
	if body == "" {
		if f.said {
			f.space += s
		}
		return ""
	}
	if !f.said {
		body, f.said = strings.TrimLeft(body, " \t\r\n"), true
	} else {
		body = f.space + body
	}
	f.space = s[len(strings.TrimRight(s, " \t\r\n")):]
	return body
}

func (f *speechFilter) inside(s string) {
	if f.closing == toolCallClose {
		f.body.WriteString(s)
	}
}

// textCall is a tool call written as text: Hermes' {"name":…,"arguments":…}, or with
// "parameters" instead of "arguments".
type textCall struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
}

// endBlock ends the block being read. A tool call's body becomes calls when it is one call, or
// a list of them (Granite writes a list).
func (f *speechFilter) endBlock() {
	if f.closing == toolCallClose {
		body := []byte(strings.TrimSpace(f.body.String()))
		var calls []textCall
		if len(body) > 0 && body[0] == '[' {
			_ = json.Unmarshal(body, &calls)
		} else {
			var c textCall
			if json.Unmarshal(body, &c) == nil {
				calls = append(calls, c)
			}
		}
		for _, c := range calls {
			if c.Name == "" {
				continue
			}
			d := toolDelta{}
			d.Function.Name, d.Function.Arguments = c.Name, c.Arguments
			if len(d.Function.Arguments) == 0 {
				d.Function.Arguments = c.Parameters
			}
			f.calls = append(f.calls, d)
		}
		f.body.Reset()
	}
	f.closing = ""
}

// tags are the tags looked for outside a block: the opening ones, and closing ones alone.
var tags = []string{thinkOpen, thinkClose, toolCallOpen, toolCallClose}

// firstTag finds the first tag of tags in s.
func firstTag(s string) (int, string) {
	best, tag := -1, ""
	for _, t := range tags {
		if i := strings.Index(s, t); i >= 0 && (best < 0 || i < best) {
			best, tag = i, t
		}
	}
	return best, tag
}

// partialTag returns the length of the longest end of s that begins tag.
func partialTag(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}
