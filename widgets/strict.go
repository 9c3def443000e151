package widgets

// fieldSet names the members a JSON object may have, for the fast path of strictUnmarshal:
// after json.Unmarshal accepted the arguments, a scan of their member names tells whether a
// strict decoder would accept them too, without the decoder's allocations. A name the scan
// cannot judge cheaply (escaped, or not ASCII) sends the arguments down the slow path.
type fieldSet struct {
	names []string
	// items holds the fields of the objects of an array member, by the member's name.
	items map[string]*fieldSet
}

// The members of the UI tools' arguments.
var (
	statFields        = &fieldSet{names: []string{"label", "value", "delta"}}
	progressFields    = &fieldSet{names: []string{"label", "value"}}
	listFields        = &fieldSet{names: []string{"title", "items"}, items: map[string]*fieldSet{"items": {names: []string{"title", "subtitle", "trailing"}}}}
	followFields      = &fieldSet{names: []string{"text"}}
	suggestionsFields = &fieldSet{names: []string{"suggestions"}}
)

// covers reports whether data, valid JSON, is an object whose members are all in f (names
// compared as encoding/json does for ASCII: without case), and so are those of the objects of
// its item arrays. False means "not sure" as well as "no".
func (f *fieldSet) covers(data []byte) bool {
	s := scanner{b: data}
	s.space()
	return s.object(f) && s.end()
}

// scanner walks JSON already known to be valid.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// object checks the object at s.i against f and moves past it.
func (s *scanner) object(f *fieldSet) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	s.space()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		name, plain := s.str()
		if !plain || !f.has(name) {
			return false
		}
		s.space()
		s.i++ // ':'
		s.space()
		if items := f.itemsOf(name); items != nil && s.peek() == '[' {
			if !s.array(items) {
				return false
			}
		} else if !s.skip() {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array checks each element of the array at s.i, objects all, against f.
func (s *scanner) array(f *fieldSet) bool {
	s.i++ // '['
	s.space()
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !s.object(f) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (f *fieldSet) has(name []byte) bool {
	for _, n := range f.names {
		if equalFoldASCII(name, n) {
			return true
		}
	}
	return false
}

func (f *fieldSet) itemsOf(name []byte) *fieldSet {
	for n, items := range f.items {
		if equalFoldASCII(name, n) {
			return items
		}
	}
	return nil
}

// equalFoldASCII reports whether b and s, ASCII both, are equal without regard to case.
func equalFoldASCII(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// str reads the string at s.i. plain is false when it holds an escape or a byte outside ASCII.
func (s *scanner) str() (v []byte, plain bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	plain = true
	for s.i = start; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], plain
		case c == '\\':
			plain = false
			s.i++
		case c >= 0x80:
			plain = false
		}
	}
	return nil, false
}

// skip moves past the value at s.i.
func (s *scanner) skip() bool {
	switch s.peek() {
	case '"':
		s.str()
		return true
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default: // number, true, false, null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return true
			}
			s.i++
		}
		return true
	}
}
