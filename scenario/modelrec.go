package scenario

import (
	"context"
	"iter"
	"strings"
	"sync"

	"github.com/convengine/engine"
)

// modelRecorder is a scenario's model with what each of its requests held kept, for
// model_not_contains: the turns of a scenario run one at a time, so what it kept between two
// takes is one turn's. A Warmer stays one (a tape holds the warm-up's request).
type modelRecorder struct {
	engine.Model
	mu  sync.Mutex
	saw []string
}

type warmRecorder struct {
	*modelRecorder
	w engine.Warmer
}

func (w warmRecorder) Warm(ctx context.Context, req *engine.ModelRequest) (engine.ModelEvent, error) {
	return w.w.Warm(ctx, req)
}

// recordModel returns m recording its requests, and the recorder.
func recordModel(m engine.Model) (engine.Model, *modelRecorder) {
	r := &modelRecorder{Model: m}
	if w, ok := m.(engine.Warmer); ok {
		return warmRecorder{r, w}, r
	}
	return r, r
}

func (r *modelRecorder) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	var b strings.Builder
	b.WriteString(req.System + "\n" + req.Context)
	for _, m := range req.Messages {
		b.WriteString("\n" + m.Content)
		for _, c := range m.ToolCalls {
			b.WriteString("\n" + c.Name + " " + string(c.Arguments))
		}
	}
	r.mu.Lock()
	r.saw = append(r.saw, b.String())
	r.mu.Unlock()
	return r.Model.Stream(ctx, req)
}

// take returns and forgets what the requests since the last take held.
func (r *modelRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	saw := r.saw
	r.saw = nil
	return saw
}
