package openai_test

import (
	"testing"

	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

func TestModelConformance(t *testing.T) {
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	tenant, err := demobank.Tenant("http://127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	enginetest.TestModel(t, newModel(t, replay.URL, nil), tenant)
}
