package engine_test

import (
	"testing"

	"github.com/convengine/engine/internal/testkit"
)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	if _, err := testkit.OpenAPIDocument(); err != nil {
		t.Fatal(err)
	}
}
