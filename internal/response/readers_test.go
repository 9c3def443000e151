package response_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/convengine/engine/internal/response"
)

func TestCounted(t *testing.T) {
	type report struct {
		n   int64
		err error
	}
	for _, tc := range []struct {
		name string
		r    io.Reader
		read func(io.ReadCloser)
		want report
	}{
		{"to its end", strings.NewReader("abcdef"), func(r io.ReadCloser) { io.ReadAll(r); r.Close() }, report{6, nil}},
		{"closed early", strings.NewReader("abcdef"), func(r io.ReadCloser) { r.Read(make([]byte, 2)); r.Close() }, report{2, nil}},
		{"failed", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(errors.New("broken"))),
			func(r io.ReadCloser) { io.ReadAll(r); r.Close() }, report{3, errors.New("broken")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []report
			tc.read(response.Counted(io.NopCloser(tc.r), func(n int64, err error) { got = append(got, report{n, err}) }))
			if len(got) != 1 || got[0].n != tc.want.n || (got[0].err == nil) != (tc.want.err == nil) {
				t.Fatalf("reported %v, want once %v", got, tc.want)
			}
		})
	}
}

func TestOnClose(t *testing.T) {
	released := 0
	r := response.OnClose(io.NopCloser(strings.NewReader("abc")), func() { released++ })
	if b, _ := io.ReadAll(r); string(b) != "abc" || released != 0 {
		t.Fatalf("read %q, released %d times before the close", b, released)
	}
	r.Close()
	r.Close()
	if released != 1 {
		t.Fatalf("released %d times, want once", released)
	}
}
