package sse

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFollow checks how a replay from a log ends, and which events a client reads of it.
func TestFollow(t *testing.T) {
	ev := func(id int, name string) Logged { return Logged{ID: id, Name: name, Data: []byte(`{}`)} }
	failed := errors.New("store down")
	for _, tc := range []struct {
		name  string
		after int
		first Batch
		next  []Batch // what each read returns; past its end, a read fails
		want  Followed
		ids   string
	}{
		{"done in the first batch", 1, Batch{Events: []Logged{ev(2, "speak"), ev(3, "done")}, Done: true}, nil,
			Followed{End: EndDone, After: 3, Sent: 2}, "2,3"},
		{"done after a read", 0, Batch{Events: []Logged{ev(1, "start")}}, []Batch{{Events: []Logged{ev(2, "done")}}},
			Followed{End: EndDone, After: 2, Sent: 2}, "1,2"},
		{"over without done", 0, Batch{Events: []Logged{ev(1, "start")}, Done: true}, []Batch{{Done: true}},
			Followed{End: EndOver, After: 1, Sent: 1}, "1"},
		{"gap", 1, Batch{Events: []Logged{ev(2, "speak"), ev(4, "speak")}}, nil,
			Followed{End: EndGap, After: 2, Next: 4, Sent: 1}, "2"},
		{"read fails", 0, Batch{Events: []Logged{ev(1, "start")}}, nil,
			Followed{End: EndRead, After: 1, Sent: 1, Err: failed}, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := NewWriter(rec, time.Now, 0, nil)
			reads := 0
			got := w.Follow(tc.after, tc.first, time.Now().Add(time.Minute), time.Second, func(after int, wait time.Duration) (Batch, error) {
				if reads++; reads > len(tc.next) {
					return Batch{}, failed
				}
				return tc.next[reads-1], nil
			})
			w.Close()
			if got != tc.want {
				t.Errorf("Follow = %+v, want %+v", got, tc.want)
			}
			var ids []string
			r := NewReader(strings.NewReader(rec.Body.String()), 1<<20)
			for e, err := r.Next(); err == nil; e, err = r.Next() {
				ids = append(ids, e.ID)
			}
			if s := strings.Join(ids, ","); s != tc.ids {
				t.Errorf("ids %q, want %q", s, tc.ids)
			}
		})
	}
}

func TestLastEventID(t *testing.T) {
	for _, tc := range []struct {
		vals []string
		id   int
		bad  bool
	}{
		{nil, 0, false}, {[]string{"0"}, 0, false}, {[]string{"42"}, 42, false},
		{[]string{"1", "2"}, 0, true}, {[]string{"-1"}, 0, true}, {[]string{"+1"}, 0, true},
		{[]string{" 1"}, 0, true}, {[]string{"12345678901"}, 0, true}, {[]string{"1073741825"}, 0, true},
	} {
		id, bad := LastEventID(http.Header{"Last-Event-Id": tc.vals})
		if id != tc.id || (bad != "") != tc.bad {
			t.Errorf("LastEventID(%q) = %d, %q", tc.vals, id, bad)
		}
	}
}

// brokenAfter is a response that fails its writes once it took n.
type brokenAfter struct {
	*httptest.ResponseRecorder
	n int
}

func (b *brokenAfter) Write(p []byte) (int, error) {
	if b.n--; b.n < 0 {
		return 0, errors.New("gone")
	}
	return b.ResponseRecorder.Write(p)
}

// TestKept checks that a kept turn's log takes every event, numbered, and the stream those
// before its write failed.
func TestKept(t *testing.T) {
	rec := &brokenAfter{ResponseRecorder: httptest.NewRecorder(), n: 2}
	var logged []string
	k := &Kept{Stream: NewWriter(rec, time.Now, 0, nil), Log: func(l Logged) { logged = append(logged, strconv.Itoa(l.ID)+l.Name) }}
	for _, name := range []string{"start", "speak", "speak", "done"} {
		k.Send(name, []byte(`{}`))
		k.Stream.Flush()
	}
	k.Stream.Close()
	if got := strings.Join(logged, ","); got != "1start,2speak,3speak,4done" {
		t.Errorf("logged %q", got)
	}
	var ids []string
	r := NewReader(strings.NewReader(rec.Body.String()), 1<<20)
	for e, err := r.Next(); err == nil; e, err = r.Next() {
		ids = append(ids, e.ID+e.Name)
	}
	if got := strings.Join(ids, ","); got != "1start,2speak" {
		t.Errorf("streamed %q", got)
	}
}
