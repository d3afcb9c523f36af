package broker

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestExpositionEncoding(t *testing.T) {
	counter := newDesc("t_requests_total", "Requests, with a \\ and a\nnewline in the help.", kindCounter, "zeta", "alpha")
	gauge := newDesc("t_lag", "Lag.", kindGauge, "group")
	plain := newDesc("t_up", "Up.", kindGauge)
	hist := newDesc("t_seconds", "Latency.", kindHistogram, "api")

	var h latencyHist
	for _, d := range []time.Duration{50 * time.Microsecond, 2 * time.Millisecond, 2 * time.Millisecond, time.Minute} {
		h.observe(d)
	}
	e := newExpo()
	e.add(counter, 3, "z1", "a1")
	e.add(gauge, 7, `a "quoted" \ name`+"\n")
	e.add(counter, 1e6, "z2", "a2") // the same family again: written together
	e.add(plain, math.Inf(1))
	counts, sum := h.snapshot()
	e.histogram(hist, latencyBounds[:], counts, sum, "Produce")
	page := string(e.bytes())

	for _, want := range []string{
		"# HELP t_requests_total Requests, with a \\\\ and a\\nnewline in the help.\n# TYPE t_requests_total counter\n" +
			"t_requests_total{alpha=\"a1\",zeta=\"z1\"} 3\nt_requests_total{alpha=\"a2\",zeta=\"z2\"} 1e+06\n",
		`t_lag{group="a \"quoted\" \\ name\n"} 7` + "\n",
		"t_up +Inf\n",
		`t_seconds_bucket{api="Produce",le="0.0001"} 1` + "\n",
		`t_seconds_bucket{api="Produce",le="0.0025"} 3` + "\n",
		`t_seconds_bucket{api="Produce",le="30"} 3` + "\n",
		`t_seconds_bucket{api="Produce",le="+Inf"} 4` + "\n",
		`t_seconds_count{api="Produce"} 4` + "\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	// Families sorted by name.
	if a, b := strings.Index(page, "# HELP t_lag"), strings.Index(page, "# HELP t_up"); a < 0 || b < a {
		t.Errorf("families out of order:\n%s", page)
	}
	if !strings.Contains(page, "t_seconds_sum{api=\"Produce\"} 60.00405\n") {
		t.Errorf("histogram sum wrong:\n%s", page)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := parser.TextToMetricFamilies(strings.NewReader(page)); err != nil {
		t.Fatalf("page does not parse: %v\n%s", err, page)
	}
}

// Counting a request is on every request's path: no allocation.
func TestMetricsObserveAllocs(t *testing.T) {
	m := &metrics{}
	m.known[0] = true
	start := time.Now()
	if n := testing.AllocsPerRun(1000, func() { m.observe(0, start, 100, 200) }); n != 0 {
		t.Fatalf("observe allocates %v times", n)
	}
}
