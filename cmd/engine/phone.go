package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/convengine/engine"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/telephony"
	"github.com/convengine/engine/telephony/twilio"
)

// The demo's phone line: each demo tenant answers a number of its own, and its bank knows one
// caller, whose PIN is made at each start and printed in the banner.
const (
	demoNumber      = "+15555550100" // pk_demo
	demoProofNumber = "+15555550101" // pk_demo_proof
	demoCaller      = "+15555550123"
	demoPerson      = "+15555550199" // where a caller who asks for a person is put through
)

// demoTelephony is the telephony section of a demo tenant answering number: its auth token is
// TWILIO_AUTH_TOKEN's, its account TWILIO_ACCOUNT_SID's.
func demoTelephony(number, account string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"numbers": []string{number}, "transfer_to": demoPerson,
		"twilio": map[string]string{"account_sid": account, "auth_token_env": "TWILIO_AUTH_TOKEN"}})
	return b
}

// answerPhones gives the demo tenants their numbers, on the Twilio account of
// TWILIO_ACCOUNT_SID when it is set.
func (d *demo) answerPhones(getenv func(string) string) {
	account := getenv("TWILIO_ACCOUNT_SID")
	d.tenant.Telephony, d.proof.Telephony = demoTelephony(demoNumber, account), demoTelephony(demoProofNumber, account)
}

// phoneLines serves the tenants' phone lines on Twilio (docs/telephony.md): the voice webhook
// at /telephony/twilio/voice and the media streams. It needs the public URL Twilio calls
// (-public-url), which Twilio signs; without it, or with no tenant that has a number, it is
// off (nil routes). The auth tokens come from the variables the tenants' sections name
// (TWILIO_AUTH_TOKEN for the demo), never from the file; TWILIO_API_BASE_URL stands in for
// Twilio's REST API.
func phoneLines(eng *engine.Engine, phone *telephony.Phone, dir *telephony.Directory, publicURL string, getenv func(string) string, key []byte,
	shared stores, log *slog.Logger) ([]engine.Route, error) {
	switch {
	case dir.Len() == 0:
		return nil, nil
	case publicURL == "":
		log.Info("phone lines: off; they need -public-url (ENGINE_PUBLIC_URL), the URL Twilio calls and signs")
		return nil, nil
	}
	o := &twilio.Options{PublicURL: publicURL, Directory: dir, Phone: phone, Secret: getenv,
		APIBaseURL: getenv("TWILIO_API_BASE_URL"), Key: derive(key, "telephony/twilio stream tokens")}
	if shared.redis != nil {
		o.Replay = shared.redis
	}
	tw, err := twilio.New(eng, o)
	if err != nil {
		return nil, err
	}
	return tw.Routes(), nil
}

// newPhone is the phone of every transport (Twilio's, SIP), which share its bounds on calls.
func newPhone(eng *engine.Engine, sb *handoff.Switchboard) *telephony.Phone {
	return telephony.New(eng, &telephony.Options{
		// The conversation was handed to a person on the phone: its handoff to the desk ends.
		Transferred: func(ctx context.Context, _, id string) { sb.End(ctx, id) },
		// For the tenants whose speech section chose it (recognizers.Listen).
		RecognizerEndOfSpeech: true,
	})
}

// derive is a key of its own for purpose, from the signing key.
func derive(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// printPhones writes the banner's phone lines of the demo tenants.
func printPhones(w io.Writer, d *demo) {
	fmt.Fprintf(w, "\n%s phone: %s (demo caller %s, PIN %s)\n", d.tenant.Key, demoNumber, demoCaller, d.pin)
	fmt.Fprintf(w, "%s phone: %s (demo caller %s, PIN %s)\n", d.proof.Key, demoProofNumber, demoCaller, d.pin)
}
