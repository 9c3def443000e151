package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// parseSVG checks that data is well-formed XML with an svg root and counts its elements.
func parseSVG(t *testing.T, data []byte) map[string]int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	counts := map[string]int{}
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 && (el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element %v", el.Name)
			}
			depth++
			counts[el.Name.Local]++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || counts["svg"] != 1 {
		t.Fatalf("elements %v", counts)
	}
	return counts
}

func TestChartSVG(t *testing.T) {
	h := newHistogram()
	for i := 1; i <= 5000; i++ {
		record(h, time.Duration(i)*time.Microsecond)
	}
	s := summarize(h)
	rep := &Report{Mode: "turn", Operation: `a turn <with> "markup" & more`, Settings: Settings{Concurrency: 4},
		Runs: []Run{
			{Name: "bare", First: &s, Done: s},
			{Name: "engine & co", First: &s, Done: s},
			{Name: "failed", Done: Summary{}}, // nothing to draw
		}}
	counts := parseSVG(t, chartSVG(rep))
	if counts["polyline"] != 4 {
		t.Errorf("%d lines, want 4 (first and done of two runs)", counts["polyline"])
	}
	svg := string(chartSVG(rep))
	for _, want := range []string{"engine &amp; co first speak", "bare done", "99.9%", "&lt;with&gt;"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	parseSVG(t, chartSVG(&Report{Mode: "tts"}))
}

func TestNiceScale(t *testing.T) {
	for _, c := range []struct{ v, top, step float64 }{
		{0, 1, 0.2}, {24.5, 25, 5}, {0.73, 0.8, 0.2}, {100, 100, 20}, {7, 8, 2},
	} {
		top, step := niceScale(c.v)
		if top != c.top || step != c.step || top < c.v {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", c.v, top, step, c.top, c.step)
		}
	}
	for x, want := range []string{"0%", "90%", "99%", "99.9%", "99.99%"} {
		if got := percentileLabel(float64(x)); got != want && x > 0 {
			t.Errorf("label %d = %q, want %q", x, got, want)
		}
	}
}
