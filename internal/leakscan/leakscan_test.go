package leakscan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestScanFindsWhatWasSent: the values a test file sent are found in artifacts however they
// are written there (grouped, spoken, in JSON, deep in a long line), each named by file and
// line and reported masked; a value no test sent is not reported, nor are masked ones.
func TestScanFindsWhatWasSent(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "pay_test.go"), "package pay\n\nconst card = \"4111 1111 1111 1111\"\n// iban: GB82 WEST 1234 5698 7654 32\n")
	write(t, filepath.Join(root, "node_modules", "x.json"), `{"card":"5105105105105100"}`)
	sent, err := Sent(root)
	if err != nil {
		t.Fatal(err)
	}
	if !sent["4111111111111111"] || !sent["GB82WEST12345698765432"] || sent["5105105105105100"] || len(sent) != 2 {
		t.Fatalf("sent = %v", sent)
	}

	long := strings.Repeat("x", maxLine-8) + " 4111 1111 1111 1111 " + strings.Repeat("y", 100)
	write(t, filepath.Join(dir, "log-1-1.txt"), `{"level":"DEBUG","msg":"tool failed","err":"card 4111-1111-1111-1111 refused"}`+"\n"+
		`{"level":"INFO","msg":"masked •••• 1111 and 5555 5555 5555 4444, which no test sent"}`+"\n")
	write(t, filepath.Join(dir, "turnlog-1-2.txt"), "{\"delta\":\"ok\"}\n{\"transcript\":\"my card is four one one one one one one one one one one one one one one one\"}\n")
	write(t, filepath.Join(dir, "trace-2-1.txt"), `{"attributes":[{"key":"x","value":"GB82WEST12345698765432"}]}`+"\n"+long+"\n")
	leaks, counts, err := Scan(dir, sent)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range leaks {
		got = append(got, l.String())
	}
	slices.Sort(got)
	want := []string{"log-1-1.txt:1: card •••• 1111", "trace-2-1.txt:1: iban GB•• •••• … 5432", "trace-2-1.txt:2: card •••• 1111", "turnlog-1-2.txt:2: card •••• 1111"}
	if !slices.Equal(got, want) {
		t.Errorf("leaks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if counts["log"] != 2 || counts["turnlog"] != 2 || counts["trace"] != 2 {
		t.Errorf("counts %v", counts)
	}
}

// TestTheTestCommandLeftNoSentCard is the test command's last check: every log line, turn-log
// entry, trace export and event stream the tests kept (enginetest.ArtifactsEnv; the test command
// runs every test at debug level with it set, then this one with ENGINE_SCAN_ARTIFACTS naming
// the same directory) holds no card number or IBAN that a test sent.
func TestTheTestCommandLeftNoSentCard(t *testing.T) {
	dir := os.Getenv("ENGINE_SCAN_ARTIFACTS")
	if dir == "" {
		t.Skip("run by the test command once every other test has run, with ENGINE_SCAN_ARTIFACTS set")
	}
	sent, err := Sent(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	leaks, counts, err := Scan(dir, sent)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d card numbers and IBANs sent; lines read: %v", len(sent), counts)
	// A scan of nothing passes for nothing: the tests must have kept what they wrote.
	for kind, least := range map[string]int{"log": 1000, "turnlog": 100, "trace": 10, "events": 10, "record": 2} {
		if counts[kind] < least {
			t.Errorf("only %d %s lines were kept, want at least %d: are the tests keeping their artifacts?", counts[kind], kind, least)
		}
	}
	for i, l := range leaks {
		if i == 50 {
			t.Errorf("… and %d more", len(leaks)-50)
			break
		}
		t.Errorf("a value a test sent is in %s", l)
	}
}
