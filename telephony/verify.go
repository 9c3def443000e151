package telephony

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convengine/engine"
)

// ErrNotVerified says that the tenant's backend did not recognise the caller and the digits.
var ErrNotVerified = errors.New("telephony: the caller was not verified")

// maxVerifyAnswer bounds the backend's answer.
const maxVerifyAnswer = 16 << 10

// A Verifier asks a tenant's backend who is calling: the caller verification contract of
// docs/telephony.md. It is safe for concurrent use.
type Verifier struct {
	// Client makes the requests; nil is a client with a 10-second time-out.
	Client *http.Client
}

var defaultClient = &http.Client{Timeout: 10 * time.Second}

// Verify posts {"caller","digits"} to path on the tenant's production backend and returns the
// user token it answers, which the call then uses as its X-Token. A 401, 403 or 404 is
// [ErrNotVerified]. The digits go to the backend and nowhere else: no error holds them.
func (v *Verifier) Verify(ctx context.Context, t *engine.Tenant, path, requestID, caller string, digits engine.Secret) (engine.Secret, error) {
	env := t.Environments[engine.EnvProduction]
	if env == nil || env.BackendURL == "" {
		return "", errors.New("telephony: the tenant has no production backend")
	}
	body, err := json.Marshal(map[string]string{"caller": caller, "digits": digits.Reveal()})
	if err != nil {
		return "", err
	}
	defer clear(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(env.BackendURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("telephony: the verification request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(engine.HeaderRequestID, requestID)
	client := v.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("telephony: verifying the caller: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxVerifyAnswer+1))
	switch {
	case err != nil:
		return "", fmt.Errorf("telephony: reading the verification: %w", err)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound:
		return "", ErrNotVerified
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("telephony: the backend answered the verification with %d", resp.StatusCode)
	case len(data) > maxVerifyAnswer:
		return "", errors.New("telephony: the verification's answer is too large")
	}
	var answer struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(data, &answer); err != nil || answer.Token == "" || len(answer.Token) > 8192 || !utf8.ValidString(answer.Token) {
		return "", errors.New("telephony: the verification's answer holds no token of 1 to 8192 bytes")
	}
	return engine.Secret(answer.Token), nil
}
