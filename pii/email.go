package pii

// Bounds of an e-mail address (RFC 5321).
const (
	maxLocal  = 64
	maxDomain = 253
)

// localChar reports whether c may be in the local part of an address (RFC 5322 dot-atom).
func localChar(c byte) bool {
	if letterOrDigit(c) {
		return true
	}
	switch c {
	case '.', '!', '#', '$', '%', '&', '\'', '*', '+', '/', '=', '?', '^', '_', '`', '{', '|', '}', '~', '-':
		return true
	}
	return false
}

// emails finds addresses of the form local@domain.tld: a dot-atom local part of at most 64
// characters, a domain of at most 253 in labels of letters, digits and hyphens, the last of
// two or more letters. Quoted local parts, address literals and non-ASCII addresses are not
// read.
func (s *scan) emails(text string, add func(kind Kind, name string, start, end int, value string)) {
	next := 0 // where the previous address ended
	for i := 0; i < len(text); i++ {
		s.steps++
		if text[i] != '@' {
			continue
		}
		// The local part: back to a character that cannot be in it, at most 64.
		j := i
		for j > next && localChar(text[j-1]) && i-j <= maxLocal {
			s.steps++
			j--
		}
		for j < i && (text[j] == '.' || text[j] == '\'') {
			j++ // a sentence's full stop or quote before the address
		}
		if j == i || i-j > maxLocal || text[i-1] == '.' {
			continue
		}
		ok := true
		for k := j + 1; k < i; k++ {
			if text[k] == '.' && text[k-1] == '.' {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		// The domain: labels joined by single dots.
		k := i + 1
		end, labels, tld := -1, 0, true
		for k < len(text) && k-i-1 <= maxDomain {
			l := k
			tld = true
			for k < len(text) && (letterOrDigit(text[k]) || text[k] == '-') && k-l <= 63 {
				s.steps++
				if !(text[k] >= 'a' && text[k] <= 'z' || text[k] >= 'A' && text[k] <= 'Z') {
					tld = false
				}
				k++
			}
			if k == l || text[l] == '-' || text[k-1] == '-' {
				break
			}
			labels++
			if labels >= 2 && tld && k-l >= 2 {
				end = k
			}
			if k+1 < len(text) && text[k] == '.' && letterOrDigit(text[k+1]) {
				k++
				continue
			}
			break
		}
		if end < 0 || end-i-1 > maxDomain {
			continue
		}
		if end < len(text) && (text[end] == '@' || text[end] == '-' || text[end] == '_' || text[end] >= 0x80) {
			continue
		}
		add(Email, "email", j, end, text[j:end])
		next = end
		i = end - 1
	}
}
