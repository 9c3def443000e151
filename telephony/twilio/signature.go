package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// Signature is Twilio's X-Twilio-Signature of a request to rawURL with the form parameters
// form (nil for a GET, such as a media stream's upgrade): the base64 HMAC-SHA1, keyed with the
// account's auth token, of the URL followed by each parameter's name and value, sorted by
// name. It follows Twilio's "Webhooks security" page
// (https://www.twilio.com/docs/usage/webhooks/webhooks-security) and its helper libraries'
// RequestValidator (twilio-go client/request_validator.go, twilio-node
// lib/webhooks/webhooks.ts).
func Signature(authToken, rawURL string, form url.Values) string {
	var b strings.Builder
	b.WriteString(rawURL)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range form {
			if !yield(k) {
				return
			}
		}
	}) {
		vals := slices.Clone(form[name])
		slices.Sort(vals) // repeated names: each value, in order
		for _, v := range vals {
			b.WriteString(name)
			b.WriteString(v)
		}
	}
	mac := hmac.New(sha1.New, []byte(authToken))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// validSignature reports whether sig is the signature of the request, compared in constant
// time. An empty token signs nothing.
func validSignature(authToken, sig, rawURL string, form url.Values) bool {
	if authToken == "" || sig == "" {
		return false
	}
	return hmac.Equal([]byte(sig), []byte(Signature(authToken, rawURL, form)))
}
