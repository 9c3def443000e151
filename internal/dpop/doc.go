// Package dpop checks the proofs of possession that device-bound sessions send with every
// request (RFC 9449, OAuth 2.0 Demonstrating Proof of Possession): the device's public key
// as a JWK, its RFC 7638 thumbprint, the proof JWS and its claims, the request URL they name,
// and the stateless nonces an engine may require; and the public keys of passkeys, whose
// thumbprints name them to the tenant's backend, and the challenges their registrations and
// assertions sign. JWS and JWK parsing, signatures and
// thumbprints are go-jose's; this package adds the checks of RFC 9449 section 4.3.
//
// Errors say what is wrong in words a client developer can act on and never repeat the input.
package dpop
