package demobank_test

import (
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
)

func TestTenant(t *testing.T) {
	tests := []struct {
		name, production, staging string
		wantStaging               bool
	}{
		{"both environments", "http://127.0.0.1:8081", "http://127.0.0.1:8082", true},
		{"production only", "http://127.0.0.1:8081", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tenant, err := demobank.Tenant(tt.production, tt.staging)
			if err != nil {
				t.Fatal(err)
			}
			if tenant.Key != demobank.EngineKey || tenant.Environments[engine.EnvProduction].BackendURL != tt.production {
				t.Errorf("tenant %q with production at %q", tenant.Key, tenant.Environments[engine.EnvProduction].BackendURL)
			}
			if _, ok := tenant.Environments[engine.EnvStaging]; ok != tt.wantStaging {
				t.Errorf("staging configured: %v, want %v", ok, tt.wantStaging)
			}
			if _, err := engine.NewStaticTenants(tenant); err != nil {
				t.Errorf("NewStaticTenants: %v", err)
			}
			defs, err := httptools.Parse(tenant.Tools)
			if err != nil {
				t.Fatalf("tools: %v", err)
			}
			for _, d := range defs {
				if d.Action != tenant.IsAction(d.Name) {
					t.Errorf("tool %s: action in tools.json %v, on the action allow-list %v", d.Name, d.Action, tenant.IsAction(d.Name))
				}
			}
			if err := intent.New(nil).Check(tenant); err != nil {
				t.Errorf("intents: %v", err)
			}
		})
	}
}

func TestTenantInvalidURL(t *testing.T) {
	if _, err := demobank.Tenant("ftp://bank", ""); err == nil {
		t.Error("Tenant accepted an ftp backend URL")
	}
}
