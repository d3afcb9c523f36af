package broker

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The Prometheus text exposition format (version 0.0.4), written by hand:
// client_golang links google.golang.org/protobuf's reflection and its
// registry (1.5 MB of binary, package init at every start) for what is here
// a page of counters, gauges and one histogram. What a scraper relies on is
// kept: one HELP and TYPE line per family, a family's samples together,
// label names sorted, values as client_golang formats them.

// metricKind is a family's TYPE.
type metricKind string

const (
	kindCounter   metricKind = "counter"
	kindGauge     metricKind = "gauge"
	kindHistogram metricKind = "histogram"
	kindUntyped   metricKind = "untyped"
)

// metricDesc names a family and its labels. Label names are kept in the
// order samples give their values; the exposition sorts them.
type metricDesc struct {
	name   string
	help   string
	kind   metricKind
	labels []string
	order  []int // indexes of labels in sorted order
}

func newDesc(name, help string, kind metricKind, labels ...string) *metricDesc {
	d := &metricDesc{name: name, help: help, kind: kind, labels: labels}
	d.order = make([]int, len(labels))
	for i := range d.order {
		d.order[i] = i
	}
	slices.SortFunc(d.order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return d
}

// expo gathers one scrape: samples are appended per family in any order
// and written grouped by family.
type expo struct {
	fams  []*metricDesc
	lines map[*metricDesc]*bytes.Buffer
}

func newExpo() *expo { return &expo{lines: map[*metricDesc]*bytes.Buffer{}} }

func (e *expo) buf(d *metricDesc) *bytes.Buffer {
	b := e.lines[d]
	if b == nil {
		b = &bytes.Buffer{}
		e.lines[d] = b
		e.fams = append(e.fams, d)
	}
	return b
}

// add writes one sample of d with the label values in d.labels' order.
func (e *expo) add(d *metricDesc, v float64, values ...string) {
	e.sample(e.buf(d), d.name, d, v, values, "", "")
}

// sample writes name{labels[,extraName="extraValue"]} v.
func (e *expo) sample(b *bytes.Buffer, name string, d *metricDesc, v float64, values []string, extraName, extraValue string) {
	b.WriteString(name)
	if len(d.labels) > 0 || extraName != "" {
		b.WriteByte('{')
		n := 0
		for _, i := range d.order {
			if n > 0 {
				b.WriteByte(',')
			}
			writeLabel(b, d.labels[i], values[i])
			n++
		}
		if extraName != "" {
			if n > 0 {
				b.WriteByte(',')
			}
			writeLabel(b, extraName, extraValue)
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(formatValue(v))
	b.WriteByte('\n')
}

// histogram writes one series of a histogram family: cumulative buckets,
// +Inf, _sum and _count.
func (e *expo) histogram(d *metricDesc, bounds []float64, counts []uint64, sum float64, values ...string) {
	b := e.buf(d)
	var cum uint64
	for i, le := range bounds {
		cum += counts[i]
		e.sample(b, d.name+"_bucket", d, float64(cum), values, "le", formatValue(le))
	}
	cum += counts[len(bounds)]
	e.sample(b, d.name+"_bucket", d, float64(cum), values, "le", "+Inf")
	e.sample(b, d.name+"_sum", d, sum, values, "", "")
	e.sample(b, d.name+"_count", d, float64(cum), values, "", "")
}

// bytes is the page, families sorted by name as client_golang sorts them.
func (e *expo) bytes() []byte {
	slices.SortFunc(e.fams, func(a, b *metricDesc) int { return strings.Compare(a.name, b.name) })
	var out bytes.Buffer
	for _, d := range e.fams {
		out.WriteString("# HELP ")
		out.WriteString(d.name)
		out.WriteByte(' ')
		out.WriteString(escapeHelp(d.help))
		out.WriteString("\n# TYPE ")
		out.WriteString(d.name)
		out.WriteByte(' ')
		out.WriteString(string(d.kind))
		out.WriteByte('\n')
		out.Write(e.lines[d].Bytes())
	}
	return out.Bytes()
}

func writeLabel(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteString(`="`)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

func escapeHelp(s string) string {
	if !strings.ContainsAny(s, "\\\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

// formatValue formats as client_golang does: shortest 'g' form, and the
// text format's spellings of the infinities and NaN.
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// latencyHist is a fixed-bucket histogram observed without a lock or an
// allocation: one atomic add per bucket hit, the sum in nanoseconds.
type latencyHist struct {
	counts [len(latencyBounds) + 1]atomic.Uint64
	sumNS  atomic.Uint64
}

var latencyBounds = [...]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

func (h *latencyHist) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(latencyBounds) && s > latencyBounds[i] {
		i++
	}
	h.counts[i].Add(1)
	if d > 0 {
		h.sumNS.Add(uint64(d))
	}
}

func (h *latencyHist) snapshot() (counts []uint64, sum float64) {
	counts = make([]uint64, len(h.counts))
	for i := range h.counts {
		counts[i] = h.counts[i].Load()
	}
	return counts, float64(h.sumNS.Load()) / 1e9
}
