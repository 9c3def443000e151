package twilio

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// rest is Twilio's REST API for one call: its Update Call resource
// (POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json,
// https://www.twilio.com/docs/voice/api/call-resource#update-a-call-resource), with the
// account's SID and auth token as HTTP basic credentials, as twilio-go's
// rest/api/v2010/accounts_calls.go UpdateCall sends it.
type rest struct {
	client    *http.Client
	base      string
	account   string
	authToken string
	callSid   string
}

// update posts form to the call's resource.
func (r *rest) update(ctx context.Context, form url.Values) error {
	u := fmt.Sprintf("%s/2010-04-01/Accounts/%s/Calls/%s.json", strings.TrimSuffix(r.base, "/"), url.PathEscape(r.account), url.PathEscape(r.callSid))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(r.account, r.authToken)
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("twilio: updating the call: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("twilio: updating the call: Twilio answered %d", resp.StatusCode)
	}
	return nil
}

// hangup ends the call (Status=completed).
func (r *rest) hangup(ctx context.Context) error {
	return r.update(ctx, url.Values{"Status": {"completed"}})
}

// dial hands the call to number with new TwiML: <Dial> ends the media stream.
func (r *rest) dial(ctx context.Context, number string) error {
	return r.update(ctx, url.Values{"Twiml": {twiml(func(b *strings.Builder) {
		b.WriteString("<Dial>")
		xml.EscapeText(b, []byte(number))
		b.WriteString("</Dial>")
	})}})
}

// twiml writes a TwiML document whose <Response> holds what body writes.
func twiml(body func(b *strings.Builder)) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response>`)
	body(&b)
	b.WriteString("</Response>")
	return b.String()
}
