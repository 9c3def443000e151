package engine

import "github.com/convengine/engine/widgets"

// turnSink receives what a turn produces, in order: speech deltas and tool status while the
// model runs; then either the widgets and done with the spec, or an error and done with the
// apology. The SSE writer is one sink; the voice socket, which also speaks the answer, is
// another. status may be called from several goroutines at once (tools run in parallel); the
// other methods are called from the turn's goroutine. A method that returns an error reports
// that nobody is listening any more.
type turnSink interface {
	speak(delta string) error
	status(text, tool string)
	widget(w widgets.Widget) error
	fail(code, message string, retryable bool)
	done(spec widgets.Spec) error
}

var _ turnSink = (*sseWriter)(nil)

func (s *sseWriter) status(text, tool string) { _ = s.statusEvent(text, tool) }

// widget writes a widget event and keeps its bytes for done, so that each widget is encoded
// once per turn.
func (s *sseWriter) widget(w widgets.Widget) error {
	data, err := encodeWidget(w)
	if err != nil {
		return err
	}
	s.widgetData = append(s.widgetData, data)
	return s.raw(EventWidget, data)
}

func (s *sseWriter) fail(code, message string, retryable bool) {
	_ = s.event(EventError, map[string]any{"code": code, "message": message, "retryable": retryable})
}

// done writes the done event around the widgets already sent; a spec whose widgets were not
// all sent first is encoded whole.
func (s *sseWriter) done(spec widgets.Spec) error {
	if len(s.widgetData) != len(spec.Widgets) {
		return s.event(EventDone, spec)
	}
	return s.encoded(EventDone, func(b []byte) []byte { return appendSpec(b, &spec, s.widgetData) })
}
