package pii

// ibanLengths is the length of an IBAN in every country of the IBAN registry (ISO 13616,
// SWIFT's registry as of 2025), country code and check digits included. Territories that use
// another country's code (Åland with FI, the French overseas departments with FR, Jersey and
// Guernsey with GB) are covered by it.
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
	"BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
	"DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
	"FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
	"GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
	"LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
	"MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
	"PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
	"SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
	"YE": 30,
}

// maxIBAN is the longest IBAN of the registry.
const maxIBAN = 34

// ibanLength returns the length of IBANs of the country whose code is the two upper-case
// letters a, b; zero for a country without IBANs.
func ibanLength(a, b byte) int {
	if a < 'A' || a > 'Z' || b < 'A' || b > 'Z' {
		return 0
	}
	return ibanLengths[string([]byte{a, b})]
}

// mod97 reports whether iban (upper case letters and digits, no spaces) passes the ISO 7064
// MOD 97-10 check: its first four characters moved to the end, letters read as 10 to 35, the
// number modulo 97 is 1.
func mod97(iban string) bool {
	if len(iban) < 5 {
		return false
	}
	r := 0
	for i := range len(iban) {
		c := iban[(i+4)%len(iban)]
		switch {
		case c >= '0' && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			r = (r*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return r == 1
}

// isIBAN reports whether s (upper case, no spaces) is an IBAN: a registry country, two check
// digits, that country's length, the mod-97 check.
func isIBAN(s string) bool {
	if len(s) < 5 || ibanLength(s[0], s[1]) != len(s) {
		return false
	}
	if s[2] < '0' || s[2] > '9' || s[3] < '0' || s[3] > '9' {
		return false
	}
	return mod97(s)
}

// upper returns c in upper case if it is an ASCII letter, and whether it is an ASCII letter or
// digit.
func upper(c byte) (byte, bool) {
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 'A', true
	case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		return c, true
	}
	return c, false
}

// ibans finds IBANs among the tokens: typed ("ES91 2100 0418 4502 0005 1332", any case, with
// or without spaces) or spoken ("E S nine one two one double oh…", "E S ninety-one twenty-one
// zero zero…", letters of the account spelled or said as short words). The country code is one
// token of two letters (or the start of one, "ES91"), or two one-letter words; what follows,
// joined by blanks or a separator of groups ("ES91.2100.0418…", "ES91/2100/…"), fills exactly
// that country's length, ending at the end of a token, and passes the mod-97 check.
func (s *scan) ibans(text string, toks []token, add func(kind Kind, name string, start, end int, value string)) {
	var buf [maxIBAN + 1]byte
	for k := 0; k < len(toks); k++ {
		s.steps++
		t := toks[k]
		if t.class == tokDigits || t.end-t.start > maxIBAN || t.w.digits != "" && t.end-t.start != 2 {
			continue
		}
		n, next := 0, k+1
		switch {
		case t.end-t.start == 1 && t.class == tokLetters && k+1 < len(toks) &&
			toks[k+1].end-toks[k+1].start == 1 && toks[k+1].class == tokLetters &&
			joinable(text[t.end:toks[k+1].start]):
			buf[0], _ = upper(text[t.start])
			buf[1], _ = upper(text[toks[k+1].start])
			n, next = 2, k+2
		case t.end-t.start >= 2:
			ok := true
			for i := t.start; i < t.end && ok; i++ {
				buf[n], ok = upper(text[i])
				n++
			}
			if !ok || n > 2 && (buf[2] < '0' || buf[2] > '9') {
				continue
			}
		default:
			continue
		}
		want := ibanLength(buf[0], buf[1])
		if want == 0 || n > want {
			continue
		}
		last := next - 1
		// Groups joined by a separator a spoken number's are not ("/", "_") are joined by the
		// same one throughout: "IS 3003-1377 exp 02/26" is no IBAN.
		broad, uniform, key, first := false, true, "", true
		for n < want && next < len(toks) {
			s.steps++
			gap := text[toks[last].end:toks[next].start]
			if !joinable(gap) {
				if !separator(gap) {
					break
				}
				broad = true
			}
			if k := separatorKey(gap); first {
				key, first = k, false
			} else if k != key {
				uniform = false
			}
			u := toks[next]
			var chunk string
			times := 1
			switch {
			case s.numberAt(text, toks, &next, &chunk): // "ninety-one", "vingt et un"
			case u.class != tokLetters:
				chunk = text[u.start:u.end]
			case u.w.digits != "" && text[u.start:u.end] != "O":
				chunk = u.w.digits // but a capital O is spelled, not zero
			case u.w.times > 0 && next+1 < len(toks) && len(toks[next+1].w.digits) == 1:
				next++
				chunk, times = toks[next].w.digits, u.w.times
			case u.end-u.start <= 4:
				chunk = text[u.start:u.end]
			}
			if chunk == "" || n+len(chunk)*times > want {
				break
			}
			ok := true
			for range times {
				for i := 0; i < len(chunk) && ok; i++ {
					buf[n], ok = upper(chunk[i])
					n++
				}
			}
			if !ok {
				break
			}
			last = next
			next++
		}
		if n != want || broad && !uniform || !isIBAN(string(buf[:n])) {
			continue
		}
		add(IBAN, "iban", t.start, toks[last].end, string(buf[:n]))
		k = last
	}
}
