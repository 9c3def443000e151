package main

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/convengine/engine/telephony/twilio"
)

// TestPhoneDemo: the demo's banner names each demo tenant's number, its demo caller and PIN,
// and the voice webhook answers a call to that number signed with TWILIO_AUTH_TOKEN over the
// public URL, and refuses one signed otherwise.
func TestPhoneDemo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	public := "http://" + addr
	const token = "twilio-auth-token-of-the-demo"
	base, out := startServer(t, []string{"-addr", addr, "-public-url", public, "-speech", "off"},
		map[string]string{"TWILIO_AUTH_TOKEN": token, "TWILIO_API_BASE_URL": "http://127.0.0.1:1"})
	banner := regexp.MustCompile(`(?m)^pk_demo phone: (\+\d+) \(demo caller (\+\d+), PIN (\d{6})\)$`).FindStringSubmatch(out.String())
	if banner == nil || !strings.Contains(out.String(), "pk_demo_proof phone: +") {
		t.Fatalf("no phone lines in the banner:\n%s", out.String())
	}
	for _, tc := range []struct {
		token string
		want  int
	}{{token, http.StatusOK}, {"another token", http.StatusUnauthorized}} {
		form := url.Values{"CallSid": {"CA0123456789abcdef0123456789abcdef"}, "AccountSid": {"AC0123456789abcdef0123456789abcdef"},
			"From": {banner[2]}, "To": {banner[1]}}
		req, _ := http.NewRequest(http.MethodPost, base+twilio.PathVoice, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Twilio-Signature", twilio.Signature(tc.token, public+twilio.PathVoice, form))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("signed with %q: %d %s", tc.token, resp.StatusCode, body)
		}
		if tc.want == http.StatusOK && !strings.Contains(string(body), `<Stream url="ws://`+addr+twilio.PathStream+`pk_demo">`) {
			t.Errorf("TwiML %s", body)
		}
	}
}
