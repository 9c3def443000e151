package jsonenc

// RFC 8785 (the JSON Canonicalization Scheme) writes JSON so that the same arguments hash the
// same whatever the spacing, member order or number spelling of the JSON that carried them.
// The engine binds action tokens to the hash of their arguments in this form.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrNotCanonicalizable is wrapped by the errors of [Canonicalize].
var ErrNotCanonicalizable = errors.New("jsonenc: JSON cannot be canonicalized")

// maxCanonicalDepth bounds nesting, so that hostile input cannot exhaust the stack.
const maxCanonicalDepth = 64

// Canonicalize returns the RFC 8785 (JSON Canonicalization Scheme) form of one JSON value:
// object members sorted by the UTF-16 code units of their names, no insignificant white space,
// numbers in the shortest form that reads back as the same IEEE 754 double, strings with only
// the escapes JSON requires. Input must be I-JSON: duplicate member names, invalid UTF-8,
// lone surrogates, and numbers that are not finite doubles are errors.
func Canonicalize(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: the input is not valid UTF-8", ErrNotCanonicalizable)
	}
	if hasLoneSurrogate(data) {
		return nil, fmt.Errorf("%w: a string holds a lone surrogate", ErrNotCanonicalizable)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var b []byte
	b, err := canonValue(dec, b, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the value", ErrNotCanonicalizable)
	}
	return b, nil
}

func canonValue(dec *json.Decoder, b []byte, depth int) ([]byte, error) {
	if depth > maxCanonicalDepth {
		return nil, fmt.Errorf("%w: nested more than %d levels", ErrNotCanonicalizable, maxCanonicalDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotCanonicalizable, err)
	}
	switch v := tok.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: %s is not a finite double", ErrNotCanonicalizable, v)
		}
		return append(b, formatES6(f)...), nil
	case string:
		return canonString(b, v)
	case json.Delim:
		if v == '[' {
			b = append(b, '[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b = append(b, ',')
				}
				if b, err = canonValue(dec, b, depth+1); err != nil {
					return nil, err
				}
			}
			dec.Token() // ]
			return append(b, ']'), nil
		}
		return canonObject(dec, b, depth)
	}
	return nil, fmt.Errorf("%w: unexpected token", ErrNotCanonicalizable)
}

func canonObject(dec *json.Decoder, b []byte, depth int) ([]byte, error) {
	type member struct {
		key   []uint16
		name  string
		value []byte
	}
	var members []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotCanonicalizable, err)
		}
		name := tok.(string)
		if seen[name] {
			return nil, fmt.Errorf("%w: member %q appears twice", ErrNotCanonicalizable, name)
		}
		seen[name] = true
		value, err := canonValue(dec, nil, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, member{utf16.Encode([]rune(name)), name, value})
	}
	dec.Token() // }
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.key, b.key) })
	b = append(b, '{')
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = canonString(b, m.name); err != nil {
			return nil, err
		}
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}'), nil
}

// AppendCanonString appends s as RFC 8785 writes a string, for a canonical form written
// directly (the conversation record's entry headers); s must be valid UTF-8.
func AppendCanonString(b []byte, s string) ([]byte, error) { return canonString(b, s) }

// canonString writes s with the escapes of RFC 8785 section 3.2.2.2: \" \\ \b \f \n \r \t,
// other control characters as \u00xx, everything else as it is.
func canonString(b []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("%w: a string is not valid Unicode", ErrNotCanonicalizable)
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"'), nil
}

// hasLoneSurrogate reports whether a \u escape in data is a surrogate without its pair, which
// encoding/json would quietly turn into U+FFFD. Backslashes occur only inside strings.
func hasLoneSurrogate(data []byte) bool {
	escape := func(i int) (rune, bool) { // the \uXXXX at data[i:], if any
		if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
		return rune(v), err == nil
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		r, ok := escape(i)
		if !ok {
			i++ // skip the escaped character
			continue
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			low, ok := escape(i + 6)
			if !ok || low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11
		case utf16.IsSurrogate(r):
			return true
		default:
			i += 5
		}
	}
	return false
}

// formatES6 writes f as ECMAScript's Number.prototype.toString does (ECMA-262 Number::toString),
// which RFC 8785 requires.
func formatES6(f float64) string {
	if f == 0 {
		return "0" // also for -0
	}
	neg := f < 0
	e := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // shortest digits: "d.ddde±xx"
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n, k := x+1, len(digits) // the value is 0.digits × 10^n
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		sign := "+"
		if n-1 < 0 {
			sign = "-"
		}
		s += "e" + sign + strconv.Itoa(abs(n-1))
	}
	if neg {
		return "-" + s
	}
	return s
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// Hash returns the base64url SHA-256 of JSON already in canonical form.
func Hash(canon []byte) string {
	sum := sha256.Sum256(canon)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
