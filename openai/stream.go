package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"unicode"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/sse"
)

// Bounds of what a server's answer may hold.
const (
	maxChunk      = 1 << 20 // one event of the stream
	maxCompletion = 8 << 20 // a completion answered whole, as JSON
)

// ErrBadStream is wrapped by the error of a stream that is broken beyond what servers are known
// to send: an event that is not JSON, or one larger than 1 MiB.
var ErrBadStream = errors.New("openai: the server sent a stream that cannot be read")

// message is what a choice carries: a chunk's delta, or a whole completion's message.
type message struct {
	Content   json.RawMessage `json:"content"` // a string, or null
	Refusal   *string         `json:"refusal"`
	ToolCalls []toolDelta     `json:"tool_calls"`
}

// chunk is one event of a streamed completion, or a whole completion: only what the engine
// uses is decoded, so that unknown or changing members (ids, reasoning, filter results) are
// never a reason to refuse it.
type chunk struct {
	Choices []struct {
		Delta        *message `json:"delta"`
		Message      *message `json:"message"`
		FinishReason *string  `json:"finish_reason"`
	} `json:"choices"`
	// The usage is read apart (see readUsage), so that a report that cannot be right
	// costs the report, not the stream.
	Usage json.RawMessage `json:"usage"`
	XGroq json.RawMessage `json:"x_groq"`
	Error json.RawMessage `json:"error"`
	// Model is read apart too (see readModel): a server's odd model is no reason to refuse.
	Model json.RawMessage `json:"model"`
}

// completion is what one attempt read of a completion: it is fed chunks and yields text as it
// comes; the tool calls and the finish follow once the answer ended.
type completion struct {
	yield   func(engine.ModelEvent, error) bool
	yielded bool // text was handed to the caller: the attempt can no longer be retried
	stopped bool // the caller stopped ranging

	text    speechFilter
	calls   toolCalls
	finish  string
	refused bool
	usage   engine.Usage
	model   string // the model that answered, as the server named it
	retries int    // the attempts that failed before this one
	done    bool   // data: [DONE] came
	chunks  int
}

// readStream reads a streamed answer: server-sent events whose data are chunks, ended by
// [DONE], by the end of the stream, or by an error.
func (c *completion) readStream(body io.Reader, answered func()) error {
	r := sse.NewReader(body, maxChunk)
	r.Lenient = true
	for !c.done {
		ev, err := r.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, sse.ErrEventTooLarge):
			return fmt.Errorf("%w: an event larger than %d bytes", ErrBadStream, maxChunk)
		case err != nil:
			return err
		}
		answered()
		switch {
		case ev.Error != nil:
			return streamError(ev.Error) // llama.cpp's "error:" field
		case ev.Name == "error":
			return streamError(ev.Data) // an "event: error" whose data is the error
		}
		if err := c.event(ev.Data); err != nil {
			return err
		}
		if c.stopped {
			return errStopped
		}
	}
	return nil
}

// event handles the data of one event.
func (c *completion) event(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0 || data[0] == ':' || string(data) == "null":
		return nil // keep-alives of proxies: "data:", "data: : keepalive", "data: null"
	case string(data) == "[DONE]":
		c.done = true
		return nil
	case data[0] != '{':
		return fmt.Errorf("%w: an event whose data is not a JSON object", ErrBadStream)
	}
	var ch chunk
	if err := json.Unmarshal(data, &ch); err != nil {
		if bytes.IndexByte(data, '\n') >= 0 {
			// Events whose blank lines went missing arrive as one event of several data
			// lines, each a chunk of its own.
			return c.eachLine(data)
		}
		return fmt.Errorf("%w: an event whose data is not a chunk", ErrBadStream)
	}
	return c.chunk(&ch)
}

// eachLine handles each line of data as the data of an event.
func (c *completion) eachLine(data []byte) error {
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if bytes.IndexByte(line, '\n') >= 0 { // cannot happen; guards the recursion
			continue
		}
		if err := c.event(line); err != nil {
			return err
		}
	}
	return nil
}

// chunk takes one chunk in: every choice counts as the completion's (the engine asks for one;
// some servers number it 1), its text is spoken, its tool calls assembled.
func (c *completion) chunk(ch *chunk) error {
	c.chunks++
	if e := bytes.TrimSpace(ch.Error); len(e) > 0 && string(e) != "null" {
		return streamError(e)
	}
	for i := range ch.Choices {
		choice := &ch.Choices[i]
		m := choice.Delta
		if m == nil {
			m = choice.Message
		}
		if m != nil {
			if err := c.message(m); err != nil {
				return err
			}
		}
		if f := choice.FinishReason; f != nil && *f != "" {
			c.finish = *f
		}
	}
	// The last report counts: some servers report a running total on every chunk, and a
	// report that cannot be right leaves the completion without one.
	if u, ok := readUsage(ch.Usage); ok {
		c.usage = u
	} else if u, ok := readUsage(groqUsage(ch.XGroq)); ok {
		c.usage = u
	}
	if m := readModel(ch.Model); m != "" {
		c.model = m // Azure's first chunk names none
	}
	return nil
}

// maxModelName bounds the model name a server may report: it becomes an attribute of traces.
const maxModelName = 256

// readModel reads a chunk's model: "" unless it is a string of printable characters no longer
// than maxModelName.
func readModel(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil || len(s) > maxModelName {
		return ""
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return ""
		}
	}
	return s
}

func (c *completion) message(m *message) error {
	if m.Refusal != nil && *m.Refusal != "" {
		c.refused = true
	}
	if len(m.Content) > 0 && m.Content[0] == '"' {
		var s string
		if err := json.Unmarshal(m.Content, &s); err != nil {
			return fmt.Errorf("%w: content that is not a JSON string", ErrBadStream)
		}
		if !c.say(c.text.write(s)) {
			return errStopped
		}
	}
	for i := range m.ToolCalls {
		if err := c.calls.add(&m.ToolCalls[i]); err != nil {
			return err
		}
	}
	return nil
}

// say yields text to speak, and reports false once the caller stopped ranging.
func (c *completion) say(s string) bool {
	if s == "" || c.stopped {
		return !c.stopped
	}
	c.yielded = true
	c.stopped = !c.yield(engine.TextEvent(s), nil)
	return !c.stopped
}

// end yields what is left once the answer ended: the held-back text, the tool calls, and the
// finish with its reason and the usage. An answer that ended without a finish reason is
// finished when it said something or called a tool; one that said nothing was cut.
func (c *completion) end() error {
	if !c.say(c.text.flush()) {
		return errStopped
	}
	for i := range c.text.calls {
		if err := c.calls.add(&c.text.calls[i]); err != nil {
			return err
		}
	}
	calls, err := c.calls.events()
	if err != nil {
		return err
	}
	if c.finish == "" && !c.yielded && len(calls) == 0 && !c.refused {
		return ErrStreamCut
	}
	for _, call := range calls {
		if !c.yield(engine.ToolCallEvent(call), nil) {
			return errStopped
		}
	}
	reason := finishReason(c.finish)
	if len(calls) > 0 && reason == engine.FinishStop {
		reason = engine.FinishToolCalls // "stop", "end_turn" or none with calls: vLLM, LiteLLM
	}
	if c.refused {
		reason = engine.FinishRefused
	}
	c.yield(engine.ModelEvent{Kind: engine.EventFinish, Finish: reason, Usage: c.usage, Model: c.model, Retries: c.retries}, nil)
	return nil
}

// readWhole reads a completion answered as one JSON object although it was asked to stream.
func (c *completion) readWhole(body io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(body, maxCompletion+1))
	switch {
	case err != nil:
		return err
	case len(data) > maxCompletion:
		return fmt.Errorf("%w: a completion larger than %d bytes", ErrBadStream, maxCompletion)
	}
	var ch chunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return fmt.Errorf("%w: an answer that is neither a stream nor a completion", ErrBadStream)
	}
	return c.chunk(&ch)
}

// isJSON reports whether a response is a JSON document rather than an event stream.
func isJSON(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "application/json"
}

func finishReason(s string) engine.FinishReason {
	switch s {
	case "tool_calls", "function_call":
		return engine.FinishToolCalls
	case "length":
		return engine.FinishLength
	case "content_filter":
		return engine.FinishRefused
	}
	return engine.FinishStop // "stop", "end_turn", "eos" and the like
}
