// Package sip answers a bank's own SIP trunks (an SBC or a PBX in front of its carriers) with
// the engine's phone conversation, in the same Go process, over diago and sipgo
// (github.com/emiago/diago, MPL-2.0; github.com/emiago/sipgo, BSD-2-Clause).
//
// A [Server] answers INVITEs on one address over UDP and TCP. The dialled number (the
// request URI's user, else the To header's) names the tenant through a
// [telephony.Directory]; a number no tenant answers is refused with 404, an address that is
// not one of the tenant's trunks with 403, an offer without G.711 with 488, a malformed offer
// with 400, and a call past the bounds of [telephony.Calls] with 486 (the calling number's) or
// 503 with Retry-After (the tenant's, the process's, or the engine shutting down). An admitted call is answered
// with G.711 μ-law (PCMU) or A-law (PCMA) and RFC 4733 telephone events, and becomes the
// same conversation a Twilio call is ([telephony.Call]): the greeting and the AI disclosure,
// the PIN typed on the keypad (RFC 4733 events, or SIP INFO as application/dtmf-relay),
// answers spoken sentence by sentence with barge-in, actions confirmed by PIN, a transfer to a
// person by REFER whose NOTIFYs tell how it went, and a goodbye and BYE at the engine's
// Shutdown.
//
// The answer's audio is sent as RTP every 20 ms, with silence between answers; a caller who
// speaks over it stops it at the next packet. Each call's figures hold its RTP's: the caller's
// packets received and lost, and what the caller's RTCP reports say of the engine's
// ([telephony.MediaFigures]).
//
// diago keeps a few settings for the whole process (its RTP port range and its loggers): a
// process runs one Server. The libraries log nothing through the engine: what a SIP message
// holds (the keys of an INFO among it) never reaches a log.
package sip
