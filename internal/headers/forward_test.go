package headers_test

import (
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/convengine/engine/internal/headers"
)

func TestForwardedHeaders(t *testing.T) {
	cases := []struct {
		name string
		in   http.Header
		want http.Header
	}{
		{"prefix removed once", http.Header{"X-Engine-Forward-Authorization": {"Bearer b"}, "X-Engine-Forward-X-Engine-Forward-A": {"1"}},
			http.Header{"Authorization": {"Bearer b"}, "X-Engine-Forward-A": {"1"}}},
		{"prefix matched in any case, rest kept as received", http.Header{"x-ENGINE-forward-x-Tenant-id": {"t"}},
			http.Header{"x-Tenant-id": {"t"}}},
		{"several values", http.Header{"X-Engine-Forward-Accept-Language": {"en", "fr"}}, http.Header{"Accept-Language": {"en", "fr"}}},
		{"control headers dropped", http.Header{"X-Engine-Forward-X-Token": {"a"}, "X-Engine-Forward-x-engine-key": {"b"},
			"X-Engine-Forward-X-Request-Id": {"c"}, "X-Engine-Forward-X-CLIENT-METADATA": {"d"}, "X-Engine-Forward-Idempotency-Key": {"e"}}, nil},
		{"hop-by-hop dropped", http.Header{"X-Engine-Forward-Connection": {"close"}, "X-Engine-Forward-Keep-Alive": {"1"},
			"X-Engine-Forward-Proxy-Authorization": {"x"}, "X-Engine-Forward-Te": {"t"}, "X-Engine-Forward-Trailer": {"t"},
			"X-Engine-Forward-Transfer-Encoding": {"chunked"}, "X-Engine-Forward-Upgrade": {"ws"}, "X-Engine-Forward-Host": {"evil"},
			"X-Engine-Forward-Content-Length": {"5"}}, nil},
		{"headers named by Connection are not forwarded", http.Header{"Connection": {"X-Engine-Forward-A, keep-alive"},
			"X-Engine-Forward-A": {"1"}, "X-Engine-Forward-B": {"2"}}, http.Header{"B": {"2"}}},
		{"empty and invalid names dropped", http.Header{"X-Engine-Forward-": {"1"}, "X-Engine-Forward-A B": {"2"}, "X-Engine-Forward-A:B": {"3"}, "X-Engine-Forward-Ä": {"4"}}, nil},
		{"values with CR, LF or NUL dropped", http.Header{"X-Engine-Forward-A": {"ok", "x\r\nEvil: 1", "y\nz", "n\x00ul"}}, http.Header{"A": {"ok"}}},
		{"other headers ignored", http.Header{"Authorization": {"Bearer s"}, "X-Forward-A": {"1"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := http.Header(headers.Forwarded(tc.in, nil))
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestForwardedHeadersBounds(t *testing.T) {
	in := http.Header{}
	for i := range 40 {
		in[fmt.Sprintf("X-Engine-Forward-H%02d", i)] = []string{"v"}
	}
	got := headers.Forwarded(in, nil)
	if len(got) != 32 || got["H00"] == nil || got["H31"] == nil || got["H32"] != nil {
		t.Fatalf("kept %v", slices.Sorted(maps.Keys(got)))
	}

	// 16 KB of names and values: the header that would pass it is dropped, smaller ones after
	// it still fit, and the result is the same every time.
	big := strings.Repeat("b", 10<<10)
	in = http.Header{"X-Engine-Forward-A": {big}, "X-Engine-Forward-B": {big}, "X-Engine-Forward-C": {"small"}}
	for range 5 {
		got = headers.Forwarded(in, nil)
		if got["A"] == nil || got["B"] != nil || got["C"] == nil {
			t.Fatalf("kept %v", slices.Sorted(maps.Keys(got)))
		}
	}
}

// neverForwarded are the headers the protocol forbids a forwarded header to become: the
// engine's own and the hop-by-hop ones.
var neverForwarded = []string{"X-Token", "X-Engine-Key", "X-Request-ID", "X-Client-Metadata", "Idempotency-Key",
	"Connection", "Keep-Alive", "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length", "Proxy-Authorization",
	"Engine-Action-Proof", "Engine-Action-Proof-Type", "Engine-Device-Key", "Engine-Action-Token", "Engine-Device-Anything"}

func TestReservedHeadersAreNeverForwarded(t *testing.T) {
	for _, name := range neverForwarded {
		in := http.Header{"X-Engine-Forward-" + name: {"v"}, "X-Engine-Forward-" + strings.ToLower(name): {"v"}}
		if out := headers.Forwarded(in, nil); len(out) != 0 {
			t.Errorf("%s was forwarded: %v", name, slices.Sorted(maps.Keys(out)))
		}
	}
}

func FuzzForwardedHeaders(f *testing.F) {
	f.Add("X-Engine-Forward-Authorization", "Bearer x", "x-engine-forward-X-Token", "spoof", 3)
	f.Add("X-Engine-Forward-Proxy-A", "v\r\nX: y", "Connection", "X-Engine-Forward-B", 40)
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string, copies int) {
		in := http.Header{n1: {v1}, n2: {v2}}
		for i := range copies % 64 {
			in[fmt.Sprintf("%s%d", n1, i)] = []string{v1}
		}
		out := headers.Forwarded(in, nil)
		count, size := 0, 0
		for name, vals := range out {
			if !headers.ValidName(name) || headers.Reserved(name) {
				t.Fatalf("forwarded %q", name)
			}
			for _, c := range neverForwarded {
				if strings.EqualFold(name, c) {
					t.Fatalf("forwarded control or hop-by-hop header %q", name)
				}
			}
			for _, v := range vals {
				if strings.ContainsAny(v, "\r\n\x00") {
					t.Fatalf("forwarded a value with CR, LF or NUL in %q", name)
				}
				count++
				size += len(name) + len(v)
			}
		}
		if count > headers.MaxForwarded || size > headers.MaxForwardedBytes {
			t.Fatalf("%d headers, %d bytes", count, size)
		}
	})
}

func BenchmarkForward(b *testing.B) {
	in := http.Header{"X-Engine-Key": {"pk"}, "X-Token": {"t"}, "Content-Type": {"application/json"}}
	for i := range 32 {
		in[fmt.Sprintf("X-Engine-Forward-X-Header-%02d", i)] = []string{"some-value-of-moderate-length"}
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(headers.Forwarded(in, nil)) != 32 {
			b.Fatal("lost headers")
		}
	}
}
