package engine_test

import (
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// TestModelByTenant: each tenant is answered by the model its Model field picks; a tenant
// without one fails its turn with model_error, and the others go on.
func TestModelByTenant(t *testing.T) {
	a, b := testTenant(), testTenant()
	b.Key, b.Model = "pk_other", "other"
	c := testTenant()
	c.Key, c.Model = "pk_none", "missing"
	first := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("From the default.")}}
	other := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{enginetest.Text("From the other.")}}
	pick := func(t *engine.Tenant) engine.Model {
		switch t.Model {
		case "":
			return first
		case "other":
			return other
		}
		return nil
	}
	h := newHarness(t, engine.Config{Model: engine.ModelByTenant(pick)}, a, b, c)
	for key, want := range map[string]string{testKey: "From the default.", "pk_other": "From the other."} {
		evs, p := inProcess(t, h.engine, &engine.Caller{EngineKey: key, UserToken: testToken}, &engine.TurnInput{Transcript: "hi"})
		if p != nil || evs[len(evs)-1].Spec.Speak != want {
			t.Errorf("%s: %v %+v", key, p, evs)
		}
	}
	evs, p := inProcess(t, h.engine, &engine.Caller{EngineKey: "pk_none", UserToken: testToken}, &engine.TurnInput{Transcript: "hi"})
	if p != nil || evs[1].Type != engine.EventError || evs[1].Error.Code != engine.CodeModelError || evs[len(evs)-1].Spec.Meta.Error != engine.CodeModelError {
		t.Errorf("a tenant without a model: %v %+v", p, evs)
	}
	if first.Calls() != 1 || other.Calls() != 1 {
		t.Errorf("completions: default %d, other %d", first.Calls(), other.Calls())
	}
}
