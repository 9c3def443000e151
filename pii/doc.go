// Package pii finds personal data in what a user types or says: payment card numbers, IBANs,
// phone numbers, e-mail addresses, and the tenant's account numbers and other formats, so
// that the engine can keep them from the model, logs and stores. The examples are the best way
// in.
//
// # Detecting
//
// A [Detector] is built once per tenant by [New] and used by every turn:
//
//	det, err := pii.New(&pii.Options{
//		Patterns: []pii.Pattern{{Kind: pii.Account, Name: "routing", Regexp: `\b\d{9}\b`}},
//		Locales:  []string{"en", "es"},
//	})
//	...
//	for _, m := range det.Find(text) {
//		fmt.Println(m.Kind, text[m.Start:m.End], det.Mask(m, 4))
//	}
//
// [Detector.Find] returns [Match]es in order, without overlaps, each with the bytes of the
// text it covers and its value normalised (a card's digits, an IBAN in upper case without
// spaces).
//
// # What is found
//
// Numbers are read as a person reads them: format characters (zero-width spaces, direction
// marks, soft hyphens) and combining marks after a digit are ignored, full-width, circled and
// superscript digits and no-break spaces are read as their ASCII forms (NFKC), and digits of
// every script as ASCII digits; a match covers what was written, invisible characters
// included.
//
// Card numbers have 12 to 19 digits, typed at once or in groups (4-4-4-4, 4-6-5, threes,
// pairs, digit by digit) joined by the same short run of blanks and punctuation throughout
// ("4539 1488…", "4539.1488…", "4539/1488…", "(4539) (1488)…"), start with a prefix of a card network (Visa 4,
// Mastercard 51–55 and 2221–2720, American Express 34 and 37, Discover 6011, 644–649 and 65,
// JCB 3528–3589, Diners 300–305, 36 and 38, UnionPay 62, Maestro 50 and 56–69) with one of
// that network's lengths, and pass the Luhn check. Luhn alone lets one number in ten through;
// the prefixes and lengths keep amounts, dates and reference numbers out. A card number is
// never read inside a longer run of digits.
//
// IBANs (ISO 13616) start with the code of a country of the IBAN registry and two check
// digits, have exactly that country's length, and pass the mod-97 check; they are read in any
// case, at once or in groups joined as a card's are.
//
// Phone numbers are read with "+" and 8 to 15 digits (E.164), or in the national forms with
// separators of the United States, Spain, France, Germany and Mexico. A bare run of digits is
// not a phone number.
//
// E-mail addresses are read as local@domain.tld, the local part an RFC 5322 dot-atom of at most
// 64 characters, the domain at most 253.
//
// The tenant's patterns ([Pattern]) are RE2 regular expressions, found in the text and in the
// digits of spoken numbers.
//
// # Spoken digits
//
// In transcripts, digits said as words are read in the locales of [Options].Locales (English,
// Spanish, French, German, Italian, Portuguese, Arabic): "four one one one", "oh" for zero,
// "double four", "quatre un un un", "cuatro uno uno", "vier eins eins", "أربعة واحد",
// and typed digits may be those of any script ("٤١١١", "４１１１"); mixed with typed digits
// ("4111 one one one…"), with blanks, hyphens, commas and hesitations ("uh", "euh") between
// them. A number from 10 to 99 said as words is one piece of two digits, as French phone
// numbers and card groups are said in pairs: "forty-one eleven" is 4111, "zéro six, douze,
// trente-quatre" 06 12 34, and "quatre-vingt-dix-sept", "cuarenta y uno", "einundvierzig",
// "quarantuno", "quarenta e um", "واحد وأربعون" are read; hundreds and thousands are not. The
// card, IBAN, phone and tenant rules run on the digits, and a match covers the words that said
// them; a phone number said in pairs without a word for plus must start with its trunk zero.
//
// # Bounds
//
// Find reads at most [Options].MaxInput bytes of a text (64 KiB by default) and its work is
// linear in them, whatever the text: a million digits cost no more per byte than a sentence.
// Names and postal addresses are not detected.
package pii
