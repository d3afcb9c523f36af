package interop

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mask replaces what legitimately differs between two runs (ids, times,
// addresses) so that a golden diff shows only real differences.
type Mask struct {
	Re   *regexp.Regexp
	Repl string
}

// DefaultMasks are applied in order by MaskOutput.
var DefaultMasks = []Mask{
	// Timestamps first: they contain digit runs the later masks would eat.
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?`), "<TIME>"},
	{regexp.MustCompile(`\b1[0-9]{12}\b`), "<TIME-MS>"},
	// RFC 4122 text UUIDs.
	{regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`), "<UUID>"},
	// Addresses: loopback host with optional port, as host:port or /host:port.
	{regexp.MustCompile(`(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?`), "<HOST:PORT>"},
	// Metadata epochs (kafka-features "Epoch: 19") count records, not meaning.
	{regexp.MustCompile(`\bEpoch: \d+`), "Epoch: <N>"},
	// Generated client and group ids.
	{regexp.MustCompile(`\b(console-(?:share-)?consumer|console-producer|adminclient|producer|consumer)-(\d+)\b`), "$1-<N>"},
}

// kafkaUUID matches a Kafka Uuid as printed (22 chars of URL-safe base64).
// Only tokens with both cases that are not CamelCase words count, so
// ordinary names survive;
// the all-zero Uuid (AAAAAAAAAAAAAAAAAAAAAA) is kept on purpose: printing it
// where Kafka prints a real id is a bug worth seeing.
var kafkaUUID = regexp.MustCompile(`[A-Za-z0-9_-]{22}`)

// MaskOutput applies the masks, the Kafka Uuid mask and literal
// replacements (e.g. a target's temp dir -> "<DIR>") to s.
func MaskOutput(s string, literal map[string]string) string {
	// Longest literal first so that a dir and its parent both work.
	keys := make([]string, 0, len(literal))
	for k := range literal {
		if k != "" {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, literal[k])
	}
	for _, m := range DefaultMasks {
		s = m.Re.ReplaceAllString(s, m.Repl)
	}
	return replaceUUIDTokens(s)
}

func replaceUUIDTokens(s string) string {
	idx := kafkaUUID.FindAllStringIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	prev := 0
	for _, m := range idx {
		tok := s[m[0]:m[1]]
		// Must stand alone: not part of a longer identifier.
		if (m[0] > 0 && isUUIDChar(s[m[0]-1])) || (m[1] < len(s) && isUUIDChar(s[m[1]])) {
			continue
		}
		if !hasUpperAndLower(tok) || camelCase.MatchString(tok) {
			continue
		}
		b.WriteString(s[prev:m[0]])
		b.WriteString("<ID>")
		prev = m[1]
	}
	b.WriteString(s[prev:])
	return b.String()
}

// camelCase is an API or class name such as ConsumerGroupHeartbeat, 22
// letters long by chance; a random Uuid practically never has this shape.
var camelCase = regexp.MustCompile(`^(?:[A-Z][a-z]+)+$`)

func isUUIDChar(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func hasUpperAndLower(s string) bool {
	up, low := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			low = true
		}
	}
	return up && low
}

// DiffLines returns a line diff of a and b ("-" only in a, "+" only in b,
// " " common), or nil when they are equal. Outputs here are at most a few
// hundred lines, so a plain LCS table is fine.
func DiffLines(a, b string) []string {
	if a == b {
		return nil
	}
	x := strings.Split(strings.TrimSuffix(a, "\n"), "\n")
	y := strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	n, m := len(x), len(y)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out = append(out, " "+x[i])
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			// Deletions before insertions, as diff -u prints them.
			out = append(out, "-"+x[i])
			i++
		default:
			out = append(out, "+"+y[j])
			j++
		}
	}
	return out
}

// Recorder keeps each step's output per target for a golden comparison.
type Recorder struct {
	Dir string // outputs go to Dir/<target>/<step>.txt

	mu      sync.Mutex
	outputs map[string]map[string]string // step -> target -> text
	literal map[string]map[string]string // target -> literal masks
}

// NewRecorder records into dir (created if missing).
func NewRecorder(dir string) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create golden dir %s: %w", dir, err)
	}
	return &Recorder{Dir: dir, outputs: map[string]map[string]string{}, literal: map[string]map[string]string{}}, nil
}

// AddLiteral masks text in target's outputs as repl (e.g. its data dir).
func (r *Recorder) AddLiteral(target, text, repl string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.literal[target] == nil {
		r.literal[target] = map[string]string{}
	}
	r.literal[target][text] = repl
}

// Record stores one step's output. step is a slash-separated name such as
// "topics/describe"; the same step name must be used on every target.
func (r *Recorder) Record(target, step, text string) error {
	r.mu.Lock()
	if r.outputs[step] == nil {
		r.outputs[step] = map[string]string{}
	}
	r.outputs[step][target] = text
	r.mu.Unlock()
	path := filepath.Join(r.Dir, target, filepath.FromSlash(step)+".txt")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("golden: %w", err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("golden: %w", err)
	}
	return nil
}

// StepDiff is the comparison of one step between two targets.
type StepDiff struct {
	Step  string
	Note  string   // "differs", "only in <target>"
	Lines []string // masked line diff (a = first target, b = second)
}

// Compare masks and diffs every step recorded for targets a and b, writes
// Dir/summary.txt and returns the steps that differ, sorted by name.
func (r *Recorder) Compare(a, b string) ([]StepDiff, error) {
	r.mu.Lock()
	steps := make([]string, 0, len(r.outputs))
	for s := range r.outputs {
		steps = append(steps, s)
	}
	sort.Strings(steps)
	var diffs []StepDiff
	same := 0
	for _, s := range steps {
		ta, okA := r.outputs[s][a]
		tb, okB := r.outputs[s][b]
		switch {
		case !okA:
			diffs = append(diffs, StepDiff{Step: s, Note: "only in " + b})
		case !okB:
			diffs = append(diffs, StepDiff{Step: s, Note: "only in " + a})
		default:
			d := DiffLines(MaskOutput(ta, r.literal[a]), MaskOutput(tb, r.literal[b]))
			if d == nil {
				same++
				continue
			}
			diffs = append(diffs, StepDiff{Step: s, Note: "differs", Lines: d})
		}
	}
	r.mu.Unlock()

	var sb strings.Builder
	fmt.Fprintf(&sb, "golden comparison: - %s, + %s (after masking ids, times, addresses)\n", a, b)
	fmt.Fprintf(&sb, "%d steps, %d identical, %d different\n", len(steps), same, len(diffs))
	// Steps run on one target only (a scenario skipped or failed early on
	// the other) are listed together after the real differences.
	only := map[string][]string{}
	for _, d := range diffs {
		if d.Lines == nil {
			only[d.Note] = append(only[d.Note], d.Step)
			continue
		}
		fmt.Fprintf(&sb, "\n=== %s: %s\n", d.Step, d.Note)
		for _, l := range d.Lines {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	for _, note := range []string{"only in " + a, "only in " + b} {
		if len(only[note]) > 0 {
			fmt.Fprintf(&sb, "\n=== %s (%d steps):\n%s\n", note, len(only[note]), strings.Join(only[note], "\n"))
		}
	}
	path := filepath.Join(r.Dir, "summary.txt")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		return diffs, fmt.Errorf("write %s: %w", path, err)
	}
	return diffs, nil
}
