package widgets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// slowStrict is strictUnmarshal without its fast path.
func slowStrict(data []byte, v any) error {
	if len(data) == 0 {
		data = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the arguments")
	}
	return nil
}

// FuzzStrictUnmarshal checks that the fast path of strictUnmarshal decides as a strict
// decoder does, for every kind of UI tool arguments.
func FuzzStrictUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"label":"a","value":"1"}`, `{"LABEL":"a","Value":"1","delta":"+1"}`, `{"label":"a","value":"1","extra":1}`,
		`{"l\u0061bel":"a"}`, `{"label":"a"} {}`, `{"title":"t","items":[{"title":"x","subtitle":"y"},{"title":"z","bad":true}]}`,
		`{"title":"t","items":[{"title":"x","trailing":"1"}]}`, `{"value":0.5,"label":"b"}`, `{"text":"more?"}`, `{"suggestions":["a","b"]}`,
		`[]`, `null`, ``, `{"items":null}`, `{"items":[null]}`, `{"label":{"nested":[1,{"x":"}"}]},"value":"v"}`, "{\"label\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	type follow struct {
		Text string `json:"text"`
	}
	type suggestions struct {
		Suggestions []string `json:"suggestions"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []struct {
			newV   func() any
			fields *fieldSet
		}{
			{func() any { return new(Stat) }, statFields},
			{func() any { return new(Progress) }, progressFields},
			{func() any { return new(List) }, listFields},
			{func() any { return new(follow) }, followFields},
			{func() any { return new(suggestions) }, suggestionsFields},
		} {
			fast, slow := c.newV(), c.newV()
			errFast, errSlow := strictUnmarshal(data, fast, c.fields), slowStrict(data, slow)
			if (errFast == nil) != (errSlow == nil) || (errFast != nil && errFast.Error() != errSlow.Error()) {
				t.Fatalf("%T of %q: %v, a strict decoder says %v", fast, data, errFast, errSlow)
			}
			if errFast == nil && !reflect.DeepEqual(fast, slow) {
				t.Fatalf("%T of %q: %+v, a strict decoder reads %+v", fast, data, fast, slow)
			}
		}
	})
}
