package broker_test

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// checkExposition parses a /metrics page with Prometheus's own text parser
// (a test-only oracle: it refuses a family split in two, a repeated HELP or
// TYPE, bad escapes and label syntax) and checks every histogram's +Inf
// bucket equals its count.
func checkExposition(t *testing.T, page string) {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(page))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				var inf uint64
				for _, b := range h.GetBucket() {
					if math.IsInf(b.GetUpperBound(), 1) {
						inf = b.GetCumulativeCount()
					}
				}
				if inf != h.GetSampleCount() {
					t.Errorf("%s: +Inf bucket %d, count %d", name, inf, h.GetSampleCount())
				}
			}
		}
	}
}
