package pii

import "strings"

// Bullet is the character that stands for a hidden character in [Detector.Mask]'s output.
const Bullet = "•"

// Mask returns m's value masked, for showing to the user or writing where the value may not
// go, keeping its last keep characters (digits, for a card or phone) in the clear. keep is
// never more than half the value's length, so a short value is never shown whole; a negative
// keep is zero. The forms are:
//
//	Card     "•••• 1111"          (keep 4; "••••" with keep 0)
//	IBAN     "ES•• •••• … 3456"   (the country code and the last keep characters)
//	Phone    "•••• 5678"
//	Email    "j•••@e•••.com"      (first letters and top-level domain; keep is not used)
//	Account, Custom "•••• 6789"
//
// The number of bullets does not tell the length of the value.
func (d *Detector) Mask(m Match, keep int) string {
	v := m.Value
	if m.Kind == Email {
		return maskEmail(v)
	}
	keep = max(0, min(keep, len(v)/2))
	tail := v[len(v)-keep:]
	var b strings.Builder
	if m.Kind == IBAN && len(v) > 4 {
		b.WriteString(v[:2])
		b.WriteString(Bullet + Bullet + " " + Bullet + Bullet + Bullet + Bullet + " …")
	} else {
		b.WriteString(Bullet + Bullet + Bullet + Bullet)
	}
	if keep > 0 {
		b.WriteString(" ")
		b.WriteString(tail)
	}
	return b.String()
}

// maskEmail masks an address but for the first character of its local part and domain, and
// its top-level domain.
func maskEmail(v string) string {
	at := strings.LastIndexByte(v, '@')
	if at <= 0 || at == len(v)-1 {
		return Bullet + Bullet + Bullet
	}
	domain := v[at+1:]
	tld := ""
	if dot := strings.LastIndexByte(domain, '.'); dot > 0 {
		tld = domain[dot:]
	}
	return v[:1] + Bullet + Bullet + Bullet + "@" + domain[:1] + Bullet + Bullet + Bullet + tld
}
