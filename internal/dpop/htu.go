package dpop

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// NormalizeHTU returns the URL s as proofs are compared (RFC 3986 section 6.2.2 and 6.2.3):
// scheme and host in lower case, the scheme's default port dropped, percent-encodings with
// upper-case digits and unreserved characters decoded, an empty path as "/", and no query,
// fragment or user information. ok is false unless s is an absolute http or https URL.
func NormalizeHTU(s string) (string, bool) {
	if len(s) > maxHTULen {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.User != nil || u.Opaque != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return "", false
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	var b strings.Builder
	b.Grow(len(s) + 1)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if !normalizePercent(&b, path) {
		return "", false
	}
	return b.String(), true
}

// normalizePercent writes path with percent-encodings normalised: unreserved characters decoded,
// other octets with upper-case hex digits.
func normalizePercent(b *strings.Builder, path string) bool {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(path) || !isHex(path[i+1]) || !isHex(path[i+2]) {
			return false
		}
		v := unhex(path[i+1])<<4 | unhex(path[i+2])
		i += 2
		if isUnreserved(v) {
			b.WriteByte(v)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[v>>4])
			b.WriteByte(hex[v&15])
		}
	}
	return true
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func isUnreserved(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// ParsePublicURL checks the URL the engine is reached at, as proofs name it: an absolute http
// or https URL without user, query or fragment; "" is nil.
func ParsePublicURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("must be an absolute http or https URL without user, query or fragment")
	}
	if _, ok := NormalizeHTU(s); !ok {
		return nil, errors.New("is not a valid URL")
	}
	return u, nil
}

// RequestHTU returns the normalised URL proofs of r must name: the public URL's scheme, host
// and path prefix followed by r's path; without a public URL, the scheme of r's connection,
// its Host header and the path it was sent to.
func RequestHTU(public *url.URL, r *http.Request) (string, bool) {
	if public != nil {
		return NormalizeHTU(public.Scheme + "://" + public.Host + strings.TrimSuffix(public.EscapedPath(), "/") + r.URL.EscapedPath())
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	path := r.URL.EscapedPath()
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && r.RequestURI != "*" {
		path = u.EscapedPath() // the path as sent, before any http.StripPrefix
	}
	return NormalizeHTU(scheme + "://" + r.Host + path)
}
