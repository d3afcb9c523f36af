package main

import (
	"math"
	"slices"
)

// Sections of the report, in order: one table and one set of charts each.
const (
	secProduce = "Produce"
	secFetch   = "Fetch"
	secShare   = "Share groups"
	secStartup = "Start-up"
	secMemory  = "Memory"
	secCPU     = "Broker CPU"
)

var sectionOrder = []string{secProduce, secFetch, secShare, secSlow, secCompaction, secTLS, secStartup, secMemory, secCPU}

// metricDef is one row of the report.
type metricDef struct {
	Section string
	Name    string // row label, unique within the report
	Unit    string
	Higher  bool // higher is better (throughput); else lower is (latency, RSS)
}

// results holds every value measured, per row and broker, one value per
// run (a start-up value is already the median of its starts).
type results struct {
	brokers []string
	defs    []metricDef
	vals    map[string]map[string][]float64
	notes   map[string]map[string]string // why a broker has no value
}

func newResults(brokers []string) *results {
	return &results{
		brokers: brokers,
		vals:    map[string]map[string][]float64{},
		notes:   map[string]map[string]string{},
	}
}

func (r *results) define(d metricDef) {
	if _, ok := r.vals[d.Name]; ok {
		return
	}
	r.defs = append(r.defs, d)
	r.vals[d.Name] = map[string][]float64{}
	r.notes[d.Name] = map[string]string{}
}

func (r *results) add(d metricDef, broker string, v float64) {
	r.define(d)
	r.vals[d.Name][broker] = append(r.vals[d.Name][broker], v)
}

// na records why broker has no value for d; the first reason is kept.
func (r *results) na(d metricDef, broker, why string) {
	r.define(d)
	if _, ok := r.notes[d.Name][broker]; !ok {
		r.notes[d.Name][broker] = why
	}
}

// stats are the median, min and max of one broker's values for one row.
type stats struct {
	N                int
	Median, Min, Max float64
}

func (r *results) stats(name, broker string) (stats, bool) {
	v := r.vals[name][broker]
	if len(v) == 0 {
		return stats{}, false
	}
	return stats{N: len(v), Median: median(v), Min: slices.Min(v), Max: slices.Max(v)}, true
}

// ratio is median(a)/median(b) for one row, NaN when either is missing or b
// is zero. Both medians come from the same interleaved runs.
func (r *results) ratio(name, a, b string) float64 {
	sa, okA := r.stats(name, a)
	sb, okB := r.stats(name, b)
	if !okA || !okB || sb.Median == 0 {
		return math.NaN()
	}
	return sa.Median / sb.Median
}

func (r *results) section(sec string) []metricDef {
	var out []metricDef
	for _, d := range r.defs {
		if d.Section == sec {
			out = append(out, d)
		}
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile is the nearest-rank percentile (p in [0,100]) of sorted s.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}
