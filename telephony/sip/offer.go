package sip

import (
	"net/netip"
	"strconv"
	"strings"

	sipmsg "github.com/emiago/sipgo/sip"
)

// Bounds of an SDP offer.
const (
	maxOffer   = 8 << 10
	maxFormats = 32
)

// checkOffer reads a caller's SDP offer (RFC 4566, RFC 3264) before diago does, strictly: one
// audio stream of RTP/AVP at a unicast address, with G.711 among its formats. It returns 0
// for an offer the engine answers, else the status to refuse it with (400 for an offer that
// is not SDP, 488 for one the engine cannot take) and why. diago's parser trusts its input
// (a c= line of one field, an rtpmap given twice are out-of-range panics in it), so nothing
// this refuses reaches it.
func checkOffer(body []byte) (int, string) {
	const bad, unacceptable = sipmsg.StatusBadRequest, sipmsg.StatusNotAcceptableHere
	if len(body) == 0 {
		return unacceptable, "no SDP offer"
	}
	if len(body) > maxOffer {
		return bad, "the SDP offer is too large"
	}
	var (
		origin, conn, audio bool
		media               int
		formats             []string
		rtpmap              = map[string]string{}
	)
	for raw := range strings.Lines(string(body)) {
		line := strings.TrimRight(raw, "\r\n")
		if line == "" {
			continue
		}
		if len(line) < 2 || line[1] != '=' || line[0] < 'a' || line[0] > 'z' {
			return bad, "a line of the SDP offer is not type=value"
		}
		value := line[2:]
		switch line[0] {
		case 'o':
			f := strings.Fields(value)
			if len(f) < 6 || !numeric(f[1]) || !numeric(f[2]) {
				return bad, "the SDP offer's o= line is malformed"
			}
			origin = true
		case 'c':
			f := strings.Fields(value)
			if len(f) != 3 || f[0] != "IN" || (f[1] != "IP4" && f[1] != "IP6") {
				return bad, "the SDP offer's c= line is malformed"
			}
			addr, err := netip.ParseAddr(strings.Split(f[2], "/")[0])
			if err != nil || (f[1] == "IP4") != addr.Is4() {
				return bad, "the SDP offer's c= address is not an IP address"
			}
			if !conn && (addr.IsUnspecified() || addr.IsMulticast()) {
				return unacceptable, "the SDP offer's address is not a unicast one"
			}
			conn = true
		case 'm':
			media++
			f := strings.Fields(value)
			if len(f) < 4 {
				return bad, "the SDP offer's m= line is malformed"
			}
			audio = f[0] == "audio"
			port, err := strconv.Atoi(strings.Split(f[1], "/")[0])
			switch {
			case err != nil || port < 0 || port > 65535:
				return bad, "the SDP offer's m= port is malformed"
			case !audio:
				return unacceptable, "the SDP offer holds a stream that is not audio"
			case port == 0:
				return unacceptable, "the SDP offer's audio stream is refused (port 0)"
			case f[2] != "RTP/AVP":
				return unacceptable, "the SDP offer's profile is not RTP/AVP (no SRTP, no WebRTC)"
			case len(f)-3 > maxFormats:
				return bad, "the SDP offer lists too many formats"
			}
			formats = f[3:]
		case 'a':
			if rest, ok := strings.CutPrefix(value, "rtpmap:"); ok {
				pt, enc, _ := strings.Cut(rest, " ")
				name, rate, ok := strings.Cut(enc, "/")
				rate, _, _ = strings.Cut(rate, "/")
				if !ok || !numeric(pt) || !numeric(rate) || name == "" {
					return bad, "an rtpmap of the SDP offer is malformed"
				}
				if _, twice := rtpmap[pt]; twice {
					return bad, "the SDP offer maps a payload type twice"
				}
				rtpmap[pt] = strings.ToLower(name) + "/" + rate
			}
		}
	}
	switch {
	case !origin:
		return bad, "the SDP offer has no o= line"
	case !conn:
		return bad, "the SDP offer has no c= line"
	case media != 1:
		return unacceptable, "the SDP offer must hold one audio stream"
	}
	g711 := false
	seen := map[string]bool{}
	for _, f := range formats {
		pt, err := strconv.Atoi(f)
		if err != nil || pt < 0 || pt > 127 || seen[f] {
			return bad, "the SDP offer's formats are malformed"
		}
		seen[f] = true
		switch m := rtpmap[f]; {
		case f == "0" || f == "8", m == "pcmu/8000", m == "pcma/8000":
			g711 = true
		}
	}
	if !g711 {
		return unacceptable, "the SDP offer holds no G.711 (PCMU or PCMA)"
	}
	return 0, ""
}

// terminated is body with its last line ended: diago's parser drops a last line without one,
// which the check would have read.
func terminated(body []byte) []byte {
	if len(body) > 0 && body[len(body)-1] != '\n' {
		return append(body[:len(body):len(body)], '\r', '\n')
	}
	return body
}

func numeric(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}
