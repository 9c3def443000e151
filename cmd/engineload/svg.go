package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
)

// Chart geometry, in SVG user units.
const (
	chartW       = 880
	chartH       = 530
	marginLeft   = 70
	marginRight  = 40
	marginTop    = 50
	marginBottom = 200
)

var chartColors = []string{"#0b5fff", "#e8590c", "#2b8a3e", "#862e9c", "#c92a2a", "#495057"}

// series is one line of the chart.
type series struct {
	label  string
	color  string
	dashed bool
	dotted bool
	sum    *Summary
}

// chartSVG draws the latency distribution of every run, HDR style: latency against percentile
// on a scale that spreads the tail (90%, 99%, 99.9% equally apart).
func chartSVG(rep *Report) []byte {
	var all []series
	for i := range rep.Runs {
		r := &rep.Runs[i]
		color := chartColors[i%len(chartColors)]
		first := "first speak"
		if rep.Mode == "tts" {
			first = "first audio"
		}
		if r.First != nil && r.First.Count > 0 {
			all = append(all, series{label: r.Name + " " + first, color: color, sum: r.First})
		}
		if r.Done.Count > 0 {
			all = append(all, series{label: r.Name + " done", color: color, dashed: true, sum: &r.Done})
		}
		if r.Server != nil && r.Server.FirstSpeak != nil && r.Server.FirstSpeak.Count > 0 {
			all = append(all, series{label: r.Name + " first speak, in the server", color: color, dotted: true, sum: r.Server.FirstSpeak})
		}
	}
	// x is log10(1/(1-p)): 0 at 0%, 1 at 90%, 2 at 99%…; the 100th percentile has no place on it.
	xOf := func(p float64) float64 { return math.Log10(100 / (100 - p)) }
	xMax, yMax, yMin := 2.0, 0.0, math.Inf(1)
	for _, s := range all {
		for _, pt := range s.sum.Percentiles {
			if pt.Percentile < 100 {
				xMax = max(xMax, math.Ceil(xOf(pt.Percentile)-1e-9))
			}
			yMax = max(yMax, pt.Ms)
			if pt.Ms > 0 {
				yMin = min(yMin, pt.Ms)
			}
		}
	}
	plotW := float64(chartW - marginLeft - marginRight)
	plotH := float64(chartH - marginTop - marginBottom)
	px := func(x float64) float64 { return marginLeft + x/xMax*plotW }
	// Latencies a hundred times apart (the first speak and the end of a paced turn, the server's
	// share and the client's) take a logarithmic axis, so that each stays readable.
	var (
		py     func(ms float64) float64
		yTicks []float64
	)
	if yMax/yMin > 100 {
		lo, hi := math.Floor(math.Log10(yMin)), math.Ceil(math.Log10(yMax))
		py = func(ms float64) float64 {
			return marginTop + plotH - (math.Log10(max(ms, math.Pow(10, lo)))-lo)/(hi-lo)*plotH
		}
		for e := lo; e <= hi; e++ {
			yTicks = append(yTicks, math.Pow(10, e))
		}
	} else {
		yTop, yStep := niceScale(yMax)
		py = func(ms float64) float64 { return marginTop + plotH - ms/yTop*plotH }
		for y := 0.0; y <= yTop+yStep/2; y += yStep {
			yTicks = append(yTicks, y)
		}
	}
	yTop := yTicks[len(yTicks)-1]

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, chartH)
	title := "Latency distribution: " + rep.Operation
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", marginLeft, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="40" fill="#495057">%s</text>`+"\n", marginLeft, esc(subtitle(rep)))

	// grid and axes
	for _, y := range yTicks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dee2e6"/>`+"\n", px(0), py(y), px(xMax), py(y))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", px(0)-6, py(y)+4, esc(trimFloat(y)))
	}
	for x := 0.0; x <= xMax; x++ {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dee2e6"/>`+"\n", px(x), py(yTicks[0]), px(x), py(yTop))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(x), py(yTicks[0])+18, esc(percentileLabel(x)))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">percentile</text>`+"\n", px(xMax/2), py(yTicks[0])+36)
	fmt.Fprintf(&b, `<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">latency (ms)</text>`+"\n",
		marginTop+plotH/2, marginTop+plotH/2)

	for _, s := range all {
		var pts bytes.Buffer
		for _, pt := range s.sum.Percentiles {
			if pt.Percentile >= 100 {
				continue
			}
			fmt.Fprintf(&pts, "%.1f,%.1f ", px(xOf(pt.Percentile)), py(pt.Ms))
		}
		dash := s.dash()
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", s.color, dash, bytes.TrimSpace(pts.Bytes()))
	}

	// legend: one line per series with its percentiles
	y := float64(chartH - marginBottom + 62)
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" fill="#495057">series: p50, p90, p99, p99.9, max (ms)</text>`+"\n", marginLeft+34, y-18)
	for _, s := range all {
		dash := s.dash()
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n",
			marginLeft, y-4, marginLeft+26, y-4, s.color, dash)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f">%s</text>`+"\n", marginLeft+34, y, esc(s.label+": "+legendFigures(s.sum)))
		y += 16
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func (s series) dash() string {
	switch {
	case s.dashed:
		return ` stroke-dasharray="6 4"`
	case s.dotted:
		return ` stroke-dasharray="2 3"`
	}
	return ""
}

// legendFigures are the percentiles of a series.
func legendFigures(sum *Summary) string {
	return fmt.Sprintf("%s, %s, %s, %s, %s", trimFloat(sum.P50), trimFloat(sum.P90), trimFloat(sum.P99),
		trimFloat(sum.P999), trimFloat(sum.Max))
}

func subtitle(rep *Report) string {
	s := rep.Settings
	text := fmt.Sprintf("%d workers", s.Concurrency)
	if s.Rate > 0 {
		text += fmt.Sprintf(", %.0f/s open loop", s.Rate)
	}
	if m := s.Model; m != nil {
		text += fmt.Sprintf("; bench model: first token %s, %d deltas %s apart, %d widgets, %d tool calls",
			m.FirstToken, m.Deltas, m.TokenInterval, m.Widgets, m.ToolCalls)
	}
	return text + fmt.Sprintf("; %d CPUs, %s", rep.Machine.CPUs, rep.Machine.Go)
}

// niceScale returns the top of an axis covering v and its step: 1, 2 or 5 times a power of ten,
// about five steps.
func niceScale(v float64) (top, step float64) {
	if v <= 0 {
		return 1, 0.2
	}
	raw := v / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		step = mag
	case f <= 2:
		step = 2 * mag
	case f <= 5:
		step = 5 * mag
	default:
		step = 10 * mag
	}
	return math.Ceil(v/step-1e-9) * step, step
}

// percentileLabel names the percentile at x on the chart's scale: 90% at 1, 99% at 2…
func percentileLabel(x float64) string {
	return strconv.FormatFloat(100-100/math.Pow(10, x), 'f', max(int(x)-2, 0), 64) + "%"
}

func trimFloat(f float64) string { return strconv.FormatFloat(round3(f), 'f', -1, 64) }

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
