package main

import (
	"bufio"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/client"
)

func TestScanTurn(t *testing.T) {
	long := strings.Repeat("x", 40<<10)
	for _, c := range []struct {
		name, stream string
		code         string
		first        bool
		err          error
	}{
		{name: "answer", stream: "id: 1\nevent: start\ndata: {}\n\n: ping\n\nid: 2\nevent: speak\ndata: {\"delta\":\"hi\"}\n\nid: 3\nevent: done\ndata: {}\n\n", first: true},
		{name: "CRLF", stream: "event: speak\r\ndata: {}\r\n\r\nevent: done\r\ndata: {}\r\n\r\n", first: true},
		{name: "long done", stream: "event: speak\ndata: {}\n\nevent: done\ndata: {\"speak\":\"" + long + "\"}\n\n", first: true},
		{name: "error event", stream: "event: error\ndata: {\"code\":\"model_error\",\"message\":\"m\"}\n\nevent: done\ndata: {}\n\n", code: "model_error"},
		{name: "error event without code", stream: "event: error\ndata: nonsense\n\nevent: done\ndata: {}\n\n", code: "error_event"},
		{name: "cut off", stream: "event: speak\ndata: {}\n\nevent: done\ndata: {}", first: true, err: client.ErrIncompleteStream},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := scanTurn(bufio.NewReaderSize(nil, 16<<10), strings.NewReader(c.stream), time.Now())
			if !errors.Is(err, c.err) || s.code != c.code || (s.first > 0) != c.first || (err == nil) != (s.total > 0) {
				t.Fatalf("sample %+v, error %v", s, err)
			}
		})
	}
}
