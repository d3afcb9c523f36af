package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// report is what writeReport produced.
type report struct {
	Markdown string   // path of <date>.md
	Charts   []string // paths of the PNGs
}

// reportMeta is the context printed above the tables.
type reportMeta struct {
	Date     string // file name stem, e.g. 2026-11-29
	When     string // RFC 3339 start time
	Command  string
	Machine  string
	Runs     int
	Quick    bool
	Duration string
	Notes    []string
}

// writeReport writes dir/<stem>.md and the charts under dir/<stem>/.
func writeReport(dir string, meta reportMeta, r *results) (report, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return report{}, fmt.Errorf("create %s: %w", dir, err)
	}
	stem := uniqueStem(dir, meta.Date)
	chartDir := filepath.Join(dir, stem)
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		return report{}, fmt.Errorf("create %s: %w", chartDir, err)
	}
	var rep report
	var b strings.Builder
	fmt.Fprintf(&b, "# sharq vs Apache Kafka %s vs kfake: %s\n\n", "4.4", meta.When)
	if meta.Quick {
		b.WriteString("**Quick mode: small record counts and one run. A check that the harness works, not a measurement.**\n\n")
	}
	fmt.Fprintf(&b, "- Command: `%s`\n", meta.Command)
	fmt.Fprintf(&b, "- Machine: %s\n", meta.Machine)
	fmt.Fprintf(&b, "- Runs: %d, interleaved (%s, then again); each broker started on a fresh data dir per run. Took %s.\n",
		meta.Runs, strings.Join(r.brokers, ", "), meta.Duration)
	b.WriteString("- Cells: median [min..max] over the runs. Ratios are medians from the same run set; " +
		"for rows where higher is better a ratio above 1 favours sharq, for the others a ratio below 1 does.\n")
	for _, n := range meta.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	b.WriteString("\n")

	hasKafka := contains(r.brokers, "kafka")
	hasKfake := contains(r.brokers, "kfake")
	hasBase := contains(r.brokers, "sharq-base")
	for _, sec := range sectionOrder {
		defs := r.section(sec)
		if len(defs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n| Row | Unit |", sec)
		for _, br := range r.brokers {
			fmt.Fprintf(&b, " %s |", br)
		}
		if hasKafka {
			b.WriteString(" sharq/kafka |")
		}
		if hasKfake {
			b.WriteString(" sharq/kfake |")
		}
		if hasBase {
			b.WriteString(" sharq/sharq-base |")
		}
		b.WriteString("\n|---|---|")
		for range r.brokers {
			b.WriteString("---|")
		}
		if hasKafka {
			b.WriteString("---|")
		}
		if hasKfake {
			b.WriteString("---|")
		}
		if hasBase {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		var links []string
		for _, d := range defs {
			dir := "lower is better"
			if d.Higher {
				dir = "higher is better"
			}
			fmt.Fprintf(&b, "| %s | %s, %s |", d.Name, d.Unit, dir)
			for _, br := range r.brokers {
				fmt.Fprintf(&b, " %s |", r.cell(d.Name, br))
			}
			if hasKafka {
				fmt.Fprintf(&b, " %s |", fmtRatio(r.ratio(d.Name, "sharq", "kafka")))
			}
			if hasKfake {
				fmt.Fprintf(&b, " %s |", fmtRatio(r.ratio(d.Name, "sharq", "kfake")))
			}
			if hasBase {
				fmt.Fprintf(&b, " %s |", fmtRatio(r.ratio(d.Name, "sharq", "sharq-base")))
			}
			b.WriteString("\n")
			png := filepath.Join(chartDir, slug(d.Name)+".png")
			ok, err := writeChart(png, d, r)
			if err != nil {
				return rep, err
			}
			if ok {
				rep.Charts = append(rep.Charts, png)
				links = append(links, fmt.Sprintf("[%s](%s/%s)", d.Name, stem, filepath.Base(png)))
			}
		}
		if len(links) > 0 {
			fmt.Fprintf(&b, "\nCharts: %s\n", strings.Join(links, ", "))
		}
		b.WriteString("\n")
	}
	rep.Markdown = filepath.Join(dir, stem+".md")
	if err := os.WriteFile(rep.Markdown, []byte(b.String()), 0o644); err != nil {
		return rep, fmt.Errorf("write %s: %w", rep.Markdown, err)
	}
	return rep, nil
}

// uniqueStem is date, or date-2, date-3, ... when a report of that day exists.
func uniqueStem(dir, date string) string {
	stem := date
	for i := 2; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, stem+".md")); os.IsNotExist(err) {
			return stem
		}
		stem = fmt.Sprintf("%s-%d", date, i)
	}
}

func (r *results) cell(name, broker string) string {
	if s, ok := r.stats(name, broker); ok {
		if s.N == 1 {
			return fmtNum(s.Median)
		}
		return fmt.Sprintf("%s [%s..%s]", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
	}
	if why := r.notes[name][broker]; why != "" {
		return "n/a (" + strings.ReplaceAll(why, "|", "/") + ")"
	}
	return "n/a"
}

func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "n/a"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	if math.Abs(v) < 0.1 {
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// writeChart draws one row: a bar per broker at its median with a min..max
// whisker. It writes nothing (false) when no broker has a value.
func writeChart(path string, d metricDef, r *results) (bool, error) {
	var names []string
	var vals plotter.Values
	var xys plotter.XYs
	var errs plotter.YErrors
	for _, br := range r.brokers {
		s, ok := r.stats(d.Name, br)
		if !ok {
			continue
		}
		names = append(names, br)
		vals = append(vals, s.Median)
		xys = append(xys, plotter.XY{X: float64(len(xys)), Y: s.Median})
		errs = append(errs, struct{ Low, High float64 }{s.Median - s.Min, s.Max - s.Median})
	}
	if len(vals) == 0 {
		return false, nil
	}
	p := plot.New()
	p.Title.Text = d.Name
	dir := "lower is better"
	if d.Higher {
		dir = "higher is better"
	}
	p.Y.Label.Text = d.Unit + " (" + dir + ")"
	p.Y.Min = 0
	bars, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		return false, fmt.Errorf("chart %s: %w", d.Name, err)
	}
	bars.Color = color.Gray{Y: 170}
	p.Add(bars)
	eb, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{xys, errs})
	if err != nil {
		return false, fmt.Errorf("chart %s: %w", d.Name, err)
	}
	p.Add(eb)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	if err := p.Save(5*vg.Inch, 3.5*vg.Inch, path); err != nil {
		return false, fmt.Errorf("save chart %s: %w", path, err)
	}
	return true, nil
}
