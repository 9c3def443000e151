package engine_test

import (
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

func TestMemoryStoreSuite(t *testing.T) {
	enginetest.StoreSuite{New: func(*testing.T) enginetest.Store { return &engine.MemoryStore{} }}.Run(t)
}
