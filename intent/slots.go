package intent

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// slotType is the type of a slot: how its value is read and which JSON type it has.
type slotType string

// The slot types of the configuration's "type" key.
const (
	slotAmount slotType = "amount" // a sum of money, a JSON number rounded to cents
	slotNumber slotType = "number" // any number, a JSON number
	slotName   slotType = "name"   // one word, title-cased, or one of values
	slotDate   slotType = "date"   // an ISO date string, "2006-01-02"
	slotEnum   slotType = "enum"   // one of values
)

// slot is a compiled slot of an intent.
type slot struct {
	name     string
	typ      slotType
	required bool
	values   []slotValue
	max      float64 // the largest amount or number; 0: none
}

// slotValue is one allowed value of a slot and the normalised phrases that name it.
type slotValue struct {
	value   string
	phrases []string
}

// parse reads the slot's value from the text a pattern group captured.
func (s *slot) parse(text string, now time.Time) (any, bool) {
	switch s.typ {
	case slotAmount:
		return s.bounded(findAmount(text))
	case slotNumber:
		return s.bounded(findNumber(text))
	case slotDate:
		return wrap(findDate(text, now))
	case slotName:
		if len(s.values) == 0 {
			w := firstWord(text)
			return titleCase(w), w != ""
		}
	}
	return s.lookup(text)
}

// bounded is the value of an amount or number slot: none when it is past the slot's max, or
// an amount of nothing.
func (s *slot) bounded(v float64, ok bool) (any, bool) {
	if !ok || (s.max > 0 && v > s.max) || (s.typ == slotAmount && v <= 0) {
		return nil, false
	}
	return v, true
}

// find reads the slot's value from a whole utterance, for a slot no pattern captured. A name
// slot without values cannot be told from the other words and is never found this way.
func (s *slot) find(text string, now time.Time) (any, bool) {
	if s.typ == slotName && len(s.values) == 0 {
		return nil, false
	}
	return s.parse(text, now)
}

// lookup returns the first of the slot's values that text names, in its configured spelling.
func (s *slot) lookup(text string) (any, bool) {
	padded := " " + normalizePhrase(text) + " "
	for _, v := range s.values {
		for _, p := range v.phrases {
			if strings.Contains(padded, " "+p+" ") {
				return v.value, true
			}
		}
	}
	return nil, false
}

func wrap[T any](v T, ok bool) (any, bool) {
	if !ok {
		return nil, false
	}
	return v, true
}

// firstWord returns the first run of letters in s, with the apostrophes and hyphens inside it.
func firstWord(s string) string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsMark(r) && r != '\'' && r != '-' && r != '’'
	})
	if len(f) == 0 {
		return ""
	}
	return strings.Trim(f[0], "'-’")
}

// titleCase upper-cases the first letter of w and lower-cases the rest: "alex" gives "Alex".
func titleCase(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	if n == 0 {
		return ""
	}
	return string(unicode.ToTitle(r)) + strings.ToLower(w[n:])
}

// findDate returns the first date in s as "2006-01-02": an ISO date, "today", "yesterday",
// "tomorrow" (and their Spanish and Arabic words) or a weekday name, which means the latest such
// day on or before now.
func findDate(s string, now time.Time) (string, bool) {
	for _, f := range strings.Fields(s) {
		f = strings.TrimFunc(f, func(r rune) bool { return !unicode.IsDigit(r) })
		if len(f) == len("2006-01-02") {
			if d, err := time.ParseInLocation(time.DateOnly, f, now.Location()); err == nil {
				return d.Format(time.DateOnly), true
			}
		}
	}
	for _, w := range words(s) {
		days, ok := relativeDay(w, now.Weekday())
		if ok {
			return now.AddDate(0, 0, days).Format(time.DateOnly), true
		}
	}
	return "", false
}

// relativeDay returns how many days from today the folded word w names.
func relativeDay(w string, today time.Weekday) (int, bool) {
	switch w {
	case "today", "hoy", "اليوم":
		return 0, true
	case "yesterday", "ayer", "امس", "البارحه":
		return -1, true
	case "tomorrow", "manana", "غدا":
		return 1, true
	}
	names := [...][3]string{
		{"sunday", "domingo", "الاحد"},
		{"monday", "lunes", "الاثنين"},
		{"tuesday", "martes", "الثلاثاء"},
		{"wednesday", "miercoles", "الاربعاء"},
		{"thursday", "jueves", "الخميس"},
		{"friday", "viernes", "الجمعه"},
		{"saturday", "sabado", "السبت"},
	}
	for wd, ns := range names {
		for _, n := range ns {
			if w == n || w == n+"s" {
				return -((int(today) - wd + 7) % 7), true
			}
		}
	}
	return 0, false
}
