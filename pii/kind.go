package pii

// Kind is the kind of personal data a [Match] found.
type Kind int

// The kinds of personal data a [Detector] finds.
const (
	// Card is a payment card number: 12 to 19 digits, Luhn-valid, with a known issuer prefix.
	Card Kind = iota + 1
	// IBAN is an international bank account number (ISO 13616) with a valid mod-97 check.
	IBAN
	// Account is an account or routing number in one of the tenant's formats
	// ([Options].Patterns).
	Account
	// Phone is a telephone number: E.164 with a plus, or a national form with separators.
	Phone
	// Email is an e-mail address.
	Email
	// Custom is a value of one of the tenant's own named patterns ([Options].Patterns).
	Custom
)

// String returns the kind's name in lower case: "card", "iban", "account", "phone", "email"
// or "custom".
func (k Kind) String() string {
	switch k {
	case Card:
		return "card"
	case IBAN:
		return "iban"
	case Account:
		return "account"
	case Phone:
		return "phone"
	case Email:
		return "email"
	case Custom:
		return "custom"
	}
	return "unknown"
}

// Kinds lists every kind, in the order a [Detector] prefers them when two matches overlap:
// the checksummed kinds first (an IBAN before a card: an IBAN's digits often hold a
// Luhn-valid run, while a card number never holds the letters of an IBAN), then the tenant's
// patterns, then e-mail and phone.
func Kinds() []Kind { return []Kind{IBAN, Card, Account, Custom, Email, Phone} }

// Match is one piece of personal data found in a text.
type Match struct {
	// Kind is what was found.
	Kind Kind
	// Name is the name of the tenant's pattern that matched, for Account and Custom; for the
	// other kinds it is the kind's name.
	Name string
	// Start and End are byte offsets into the text given to [Detector.Find]: text[Start:End]
	// is what was written or said, spoken words included.
	Start, End int
	// Value is the value, normalised: the digits for a card, upper case without spaces for an
	// IBAN, the digits (with a leading "+" when the number was given with its country code)
	// for a phone, the address for an e-mail, the matched text (or, for spoken digits, the
	// digits) for a tenant's pattern.
	Value string
}
