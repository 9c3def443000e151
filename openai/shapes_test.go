package openai_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/widgets"
)

// TestServerShapes runs the demo bank's balance turn through the engine against each way
// OpenAI-compatible servers are known to stream: the user hears the balance sentence and sees
// its widget after the balance tool ran, or, where the server really failed, gets the model
// error and an apology; nothing of a reasoning or of a tool call's markup is spoken. The model
// also passes enginetest.TestModel against each shape that does not fail.
func TestServerShapes(t *testing.T) {
	shapes := enginetest.ServerShapes()
	if len(shapes) == 0 {
		t.Fatal("no server shapes")
	}
	for _, shape := range shapes {
		t.Run(shape.Name, func(t *testing.T) {
			replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.ShapeRoute(shape))
			d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{Model: newModel(t, replay.URL, nil)}})
			req := httptest.NewRequest(http.MethodPost, engine.PathTurn, strings.NewReader(`{"transcript":"What's my balance?"}`))
			req.Header = d.Headers()
			rec := httptest.NewRecorder()
			d.Handler.ServeHTTP(rec, req)
			turn, err := enginetest.ReadTurn(rec.Body)
			if err != nil {
				t.Fatalf("%v: %d %s", err, rec.Code, rec.Body)
			}
			for _, tag := range []string{"<think>", "</think>", "<tool_call>", "</tool_call>", "reasoning"} {
				if strings.Contains(turn.Speak, tag) {
					t.Errorf("spoke %q", turn.Speak)
				}
			}
			if shape.Fails {
				if turn.Spec.Meta.Error != engine.CodeModelError || turn.Spec.Speak == "" || len(turn.Spec.Widgets) != 0 {
					t.Errorf("spec %+v, want a model error and an apology", turn.Spec)
				}
				return
			}
			var stat *widgets.Stat
			for _, w := range turn.Spec.Widgets {
				if s, ok := w.(widgets.Stat); ok {
					stat = &s
				}
			}
			if turn.Spec.Meta.Error != "" || turn.Speak != "Your Everyday Checking balance is $1,234.56." ||
				turn.Spec.Speak != turn.Speak || stat == nil || stat.Value != "$1,234.56" {
				t.Errorf("events %s, spec %+v", turn.Names(), turn.Spec)
			}
			if len(d.Backend.Received()) == 0 {
				t.Error("the balance tool did not run")
			}
			t.Run("conformance", func(t *testing.T) {
				enginetest.TestModel(t, newModel(t, replay.URL, nil), d.Tenant)
			})
		})
	}
}
