package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
)

// needChromium returns the browser the web client's tests drive: $CHROMIUM, or Debian's.
func needChromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("drives Chromium; skipped with -short")
	}
	if b := os.Getenv("CHROMIUM"); b != "" {
		return b
	}
	b, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("the browser tests need Chromium: install the Debian package chromium (test.sh does)")
	}
	return b
}

// replicas returns what two reference servers need to act as replicas of one deployment: a
// tenants file with the demo tenant on the bank at bankURL, and the environment of a shared
// signing key and Redis at redisAddr.
func replicas(t *testing.T, bankURL, redisAddr string) (tenantsFile string, env map[string]string) {
	t.Helper()
	tn, err := demobank.Tenant(bankURL, "")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"tenants": []*engine.Tenant{tn}})
	tenantsFile = filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(tenantsFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return tenantsFile, map[string]string{
		"ENGINE_SIGNING_KEY": base64.StdEncoding.EncodeToString([]byte("a shared signing key of 32 bytes")),
		"ENGINE_REDIS_URL":   "redis://" + redisAddr,
	}
}
