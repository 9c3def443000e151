package dpop

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/convengine/engine/internal/jsonenc"
)

// ClientDataRepeatsAMember reports whether a passkey's base64url clientDataJSON names a member
// twice: its challenge or origin could then read one way to the engine and another to whoever
// reads the client data again (the bank that gets the assertion).
func ClientDataRepeatsAMember(clientDataJSON string) bool {
	// Read as leniently as the WebAuthn libraries read it, so that no spelling of the same
	// bytes escapes the check.
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(clientDataJSON, "="))
	return err == nil && jsonenc.HasDuplicateMembers(raw)
}

// RegistrationRepeatsAMember reports whether the clientDataJSON of a passkey's registration
// (the JSON of navigator.credentials.create's PublicKeyCredential) names a member twice.
func RegistrationRepeatsAMember(registration []byte) bool {
	var reg struct {
		Response struct {
			ClientDataJSON string `json:"clientDataJSON"`
		} `json:"response"`
	}
	return json.Unmarshal(registration, &reg) == nil && ClientDataRepeatsAMember(reg.Response.ClientDataJSON)
}
