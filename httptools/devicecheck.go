package httptools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/convengine/engine"
)

var _ engine.DeviceChecker = (*Toolset)(nil)

// maxDeviceCheckAnswer bounds the device check's answer, a small JSON object.
const maxDeviceCheckAnswer = 4 << 10

// CheckDevice asks the backend of env's environment whether key is enrolled for the user: a
// POST to the tenant's device_check path with the key as JSON ({"kind", "public_key",
// "thumbprint", "credential_id"}) and the user's X-Token, answered 200 {"enrolled": bool}. Any
// other answer is an error wrapping [ErrUnavailable] or [ErrBadResponse]: the engine then
// refuses, it never takes an unclear answer for an enrolment. A tenant without device_check
// gets [engine.ErrNoDeviceCheck].
func (ts *Toolset) CheckDevice(ctx context.Context, env *engine.ToolEnv, key *engine.DeviceKey) (bool, error) {
	path := env.Tenant.DeviceCheck
	if path == "" {
		return false, engine.ErrNoDeviceCheck
	}
	if env.Environment == nil || env.Environment.BackendURL == "" {
		return false, fmt.Errorf("%w: device check: the environment has no backend_url", ErrUnavailable)
	}
	u, err := url.Parse(env.Environment.BackendURL)
	if err != nil || u.Host == "" {
		return false, fmt.Errorf("%w: device check: the environment's backend_url is not an absolute URL", ErrUnavailable)
	}
	body, err := json.Marshal(key)
	if err != nil {
		return false, fmt.Errorf("httptools: device check: encoding the key: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.JoinPath(path).String(), bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("%w: device check: %w", ErrUnavailable, err)
	}
	env.SetHeaders(req.Header, "Accept", "Content-Type")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.client.Do(req)
	if err != nil {
		return false, unreachable(ctx, &Definition{Name: "device check"}, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.CopyN(io.Discard, resp.Body, maxDeviceCheckAnswer)
		return false, fmt.Errorf("%w: device check: status %d", ErrUnavailable, resp.StatusCode)
	}
	var answer struct {
		Enrolled *bool `json:"enrolled"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDeviceCheckAnswer)).Decode(&answer); err != nil || answer.Enrolled == nil {
		return false, fmt.Errorf("%w: device check: the answer is not {\"enrolled\": true|false}", ErrBadResponse)
	}
	return *answer.Enrolled, nil
}
