package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestDrillShortForm runs the drill in its short form: one round of the three faults (a
// replica killed mid-turn, Redis failed over, a replica drained) in 30 s of traffic through
// HAProxy. Every check of the drill must hold: no action run twice or lost, every turn a
// killed replica was running ended for its client within seconds, nothing cut by the drain,
// everything the users asked for done in the end. ./drill.sh runs the long form.
func TestDrillShortForm(t *testing.T) {
	if testing.Short() {
		t.Skip("runs HAProxy, Redis, Redis Sentinel and three replicas; skipped with -short")
	}
	if err := needPrograms(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err := run(t.Context(), []string{"-d", "30s", "-rounds", "1", "-turns", "4", "-voice", "2", "-actions", "2", "-dir", t.TempDir()}, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "every check held") {
		t.Error("the drill's report does not say every check held")
	}
}

// TestScalingDocShipsTheDrillsBalancer: the HAProxy configuration docs/scaling.md ships is
// the one the drill runs, line for line but the addresses.
func TestScalingDocShipsTheDrillsBalancer(t *testing.T) {
	doc, err := os.ReadFile("../../docs/scaling.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(haproxyConfig.Root.String(), "\n") {
		if strings.Contains(line, "{{") || strings.TrimSpace(line) == "" {
			continue
		}
		if !bytes.Contains(doc, []byte(line+"\n")) {
			t.Errorf("docs/scaling.md lacks the drill's HAProxy line %q", line)
		}
	}
}
