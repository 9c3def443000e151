package httptools_test

import (
	"net/http/httptest"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
)

func TestConformance(t *testing.T) {
	backend := enginetest.NewBackend(demobank.New(nil))
	srv := httptest.NewServer(backend)
	defer srv.Close()
	tenant, err := demobank.Tenant(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	enginetest.ToolsetSuite{
		Toolset: httptools.New(nil),
		Backend: backend,
		Env: func() *engine.ToolEnv {
			return &engine.ToolEnv{Tenant: tenant, Environment: tenant.Environments[engine.EnvProduction],
				UserToken: "suite-user", RequestID: "prod-suite", Forward: engine.ForwardedHeaders{"X-Tenant-Id": {"t-1"}}}
		},
	}.Run(t)
}
