package jsonenc_test

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/convengine/engine/internal/jsonenc"
)

// The vectors of RFC 8785.
func TestCanonicalizeRFC8785(t *testing.T) {
	cases := []struct{ in, want string }{
		// Section 3.2.2.
		{`{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		// Section 3.2.3: sorting by UTF-16 code units.
		{`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{`{"b":[1,{"d":2,"c":1}],"a":"x"}`, `{"a":"x","b":[1,{"c":1,"d":2}]}`},
		{` [ ] `, `[]`},
		{`"<&>\u2028"`, "\"<&>\u2028\""},
	}
	for _, tc := range cases {
		got, err := jsonenc.Canonicalize([]byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("Canonicalize(%s)\n got %s, %v\nwant %s", tc.in, got, err, tc.want)
		}
	}
}

// Appendix B: IEEE 754 doubles and their ECMAScript form.
func TestCanonicalNumbers(t *testing.T) {
	cases := []struct{ bits, want string }{
		{"0000000000000000", "0"}, {"8000000000000000", "0"},
		{"0000000000000001", "5e-324"}, {"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"}, {"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"}, {"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"}, {"44b52d02c7e14af6", "1e+23"}, {"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"}, {"444b1ae4d6e2ef4f", "999999999999999900000"}, {"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"}, {"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"}, {"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"}, {"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"}, {"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	}
	for _, tc := range cases {
		raw, _ := hex.DecodeString(tc.bits)
		f := math.Float64frombits(binary.BigEndian.Uint64(raw))
		in := strconv.FormatFloat(f, 'g', -1, 64)
		got, err := jsonenc.Canonicalize([]byte(in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s (%s): got %s, %v; want %s", tc.bits, in, got, err, tc.want)
		}
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	for _, in := range []string{`{"a":1,"a":2}`, `1e400`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, "\"\xff\"", `{"a":1} 2`, `{"a":`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`} {
		if _, err := jsonenc.Canonicalize([]byte(in)); !errors.Is(err, jsonenc.ErrNotCanonicalizable) {
			t.Errorf("Canonicalize(%s) = %v", in, err)
		}
	}
	if got, err := jsonenc.Canonicalize([]byte(`"\ud83d\ude00\\u"`)); err != nil || string(got) != "\"😀\\\\u\"" {
		t.Errorf("a surrogate pair: %s, %v", got, err)
	}
}

func FuzzCanonicalize(f *testing.F) {
	f.Add([]byte(`{"b":[1,2.50,{"z":null}],"a":"\u00e9"}`))
	f.Add([]byte(`[1e21,1e-7,-0,0.1]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := jsonenc.Canonicalize(data)
		if err != nil {
			return
		}
		// The canonical form is a fixed point.
		again, err := jsonenc.Canonicalize(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("%s canonicalizes to %s, then to %s (%v)", data, c, again, err)
		}
	})
}
