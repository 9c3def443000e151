package jsonenc

import "testing"

func TestObject(t *testing.T) {
	for in, obj := range map[string]bool{`{"a": 1}`: true, `{}`: true, `null`: false, `[]`: false, `{"a":`: false, `"x"`: false} {
		if IsObject([]byte(in)) != obj {
			t.Errorf("IsObject(%s) = %v", in, !obj)
		}
	}
	for in, want := range map[string]string{"{ \"a\" : [1, 2] }": `{"a":[1,2]}`, "{ bad": "{ bad"} {
		if got := string(Compact([]byte(in))); got != want {
			t.Errorf("Compact(%q) = %q, want %q", in, got, want)
		}
	}
}
