package intent_test

import (
	"testing"

	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/intent"
)

func TestModelConformance(t *testing.T) {
	tenant, err := demobank.Tenant("http://127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	enginetest.TestModel(t, intent.New(nil), tenant)
}
