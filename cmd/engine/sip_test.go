package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"
)

// sippPcaps is where Debian's sip-tester keeps SIPp's captures of RFC 4733 keys.
const sippPcaps = "/usr/share/sip-tester"

// TestSIPInteropSipp: SIPp, a SIP client from Debian (sip-tester), calls the reference
// server's demo number at the SIP address its banner prints, offering PCMU and RFC 4733
// events; it types the demo caller's PIN and # as RFC 4733 packets (SIPp's own captures),
// hears the answer for a few seconds and hangs up. The engine verified the caller with the
// keys, and the PIN is in none of its logs.
func TestSIPInteropSipp(t *testing.T) {
	if testing.Short() {
		t.Skip("drives sipp")
	}
	sipp, err := exec.LookPath("sipp")
	if err != nil {
		t.Fatal("sipp is missing: install Debian's package sip-tester (apt-get install sip-tester)")
	}
	if _, err := os.Stat(filepath.Join(sippPcaps, "dtmf_2833_pound.pcap")); err != nil {
		t.Fatalf("SIPp's captures of RFC 4733 keys are missing (Debian's package sip-tester): %v", err)
	}
	sipAddr := "127.0.0.1:" + strconv.Itoa(freePort(t, "udp"))
	_, out, logs := startServerLogs(t, []string{"-sip", sipAddr, "-sip-rtp-ports", "41000-41099", "-speech", "off"}, nil)
	m := regexp.MustCompile(`(?m)^pk_demo SIP: sip:(\+\d+)@(\S+) \(demo caller (\+\d+), PIN (\d{6})\)$`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no SIP line in the banner:\n%s", out.String())
	}
	number, addr, caller, pin := m[1], m[2], m[3], m[4]
	if addr != sipAddr {
		t.Fatalf("the banner names %s, not %s", addr, sipAddr)
	}
	var keys []string
	for _, k := range pin + "#" {
		name := string(k)
		if k == '#' {
			name = "pound"
		}
		keys = append(keys, filepath.Join(sippPcaps, "dtmf_2833_"+name+".pcap"))
	}
	dir := t.TempDir()
	scenario := filepath.Join(dir, "pin.xml")
	var b bytes.Buffer
	tmpl := template.Must(template.ParseFiles("testdata/sipp/pin.xml"))
	if err := tmpl.Execute(&b, map[string]any{"Caller": caller, "Keys": keys, "Hold": 3000}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scenario, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sipp, "-sf", scenario, "-s", number, "-m", "1", "-l", "1", "-t", "u1",
		"-i", "127.0.0.1", "-p", strconv.Itoa(freePort(t, "udp")), "-mi", "127.0.0.1", "-mp", strconv.Itoa(freePort(t, "udp")),
		"-timeout", "30s", "-timeout_error", "-nostdin", "-trace_err", "-error_file", filepath.Join(dir, "errors.log"), addr)
	cmd.Dir = dir
	sippOut, err := cmd.CombinedOutput()
	if err != nil {
		errs, _ := os.ReadFile(filepath.Join(dir, "errors.log"))
		t.Fatalf("sipp: %v\n%s\n%s\n%s", err, lastLines(string(sippOut), 40), errs, logs.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `"msg":"phone call"`) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	log := logs.String()
	for _, want := range []string{`"msg":"sip call"`, `"codec":"pcmu"`, `"keys":"rfc4733"`, `"msg":"phone call"`, `"verified":true`, `"reason":"hung up"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the server's log holds no %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, pin) {
		t.Error("the PIN appears in the server's log")
	}
}

// freePort is a port free on loopback for network, "udp" or "tcp".
func freePort(t *testing.T, network string) int {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
