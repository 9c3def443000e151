package agui_test

import (
	"context"
	"errors"
	"iter"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/agui"
	"github.com/convengine/engine/enginetest"
)

// brokenModel says a few words, then fails.
type brokenModel struct{}

func (brokenModel) Stream(ctx context.Context, req *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		if yield(engine.TextEvent("Let me "), nil) {
			yield(engine.ModelEvent{}, errors.New("the provider is down"))
		}
	}
}

// A turn that fails once started ends with RUN_ERROR and the engine's code, after its
// apology; the text message is closed first.
func TestFailedTurnIsRunError(t *testing.T) {
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: brokenModel{}}})
	srv := httptest.NewServer(agui.Handler(d.Engine, nil))
	defer srv.Close()
	f := &fixture{demo: d, srv: srv}
	r := f.run(t, nil, input("thread-f", "r", "What's my balance?"))
	if r.status != 200 {
		t.Fatalf("%d %v", r.status, r.problem)
	}
	checkSequence(t, r)
	end := r.last()
	if end["type"] != "RUN_ERROR" || end["code"] != engine.CodeModelError || end["message"] == "" {
		t.Fatalf("end %v", end)
	}
	if strings.Contains(end["message"].(string), "provider is down") {
		t.Errorf("the model's error reached the client: %v", end)
	}
	if r.text() == "" {
		t.Errorf("no apology: %v", r.types())
	}
}
