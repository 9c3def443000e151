package engine_test

import (
	"testing"

	"github.com/convengine/engine/internal/openapitest"
)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	if _, err := openapitest.Document(); err != nil {
		t.Fatal(err)
	}
}
