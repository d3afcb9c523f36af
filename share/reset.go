package share

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidOffsetReset is a bad share.auto.offset.reset value.
var ErrInvalidOffsetReset = errors.New("share: invalid share.auto.offset.reset")

// ParseAutoOffsetReset parses share.auto.offset.reset: "latest",
// "earliest" or "by_duration:<ISO-8601 duration>" (java.time.Duration
// syntax, e.g. PT1H, P1DT30M, PT0.5S; negative durations are rejected as
// Kafka does). Matching is case-insensitive like Kafka's.
func ParseAutoOffsetReset(s string) (OffsetReset, time.Duration, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch {
	case v == "latest":
		return ResetLatest, 0, nil
	case v == "earliest":
		return ResetEarliest, 0, nil
	case strings.HasPrefix(v, "by_duration:"):
		d, err := parseISODuration(strings.TrimPrefix(v, "by_duration:"))
		if err != nil {
			return 0, 0, fmt.Errorf("%w: %q: %w", ErrInvalidOffsetReset, s, err)
		}
		if d < 0 {
			return 0, 0, fmt.Errorf("%w: %q: negative duration", ErrInvalidOffsetReset, s)
		}
		return ResetByDuration, d, nil
	}
	return 0, 0, fmt.Errorf("%w: %q", ErrInvalidOffsetReset, s)
}

var (
	unitSeconds = map[byte]float64{'d': 24 * 3600, 'h': 3600, 'm': 60, 's': 1}
	unitOrder   = map[byte]int{'d': 0, 'h': 1, 'm': 2, 's': 3}
)

// parseISODuration parses [-+]P[nD][T[nH][nM][n[.f]S]] (lower case input).
func parseISODuration(s string) (time.Duration, error) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if !strings.HasPrefix(s, "p") || len(s) < 3 {
		return 0, errors.New("not an ISO-8601 duration")
	}
	s = s[1:]
	var total float64
	inTime, seen := false, false
	last := byte(0)
	for s != "" {
		if s[0] == 't' {
			if inTime {
				return 0, errors.New("duplicate T")
			}
			inTime, last = true, 0
			s = s[1:]
			if s == "" {
				return 0, errors.New("empty time part")
			}
			continue
		}
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+') {
			i++
		}
		if i == 0 || i == len(s) {
			return 0, errors.New("number without unit")
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0, err
		}
		u := s[i]
		o, ok := unitOrder[u]
		if !ok || (u == 'd') == inTime || (last != 0 && unitOrder[last] >= o) {
			return 0, fmt.Errorf("unit %q out of place", u)
		}
		if strings.Contains(s[:i], ".") && u != 's' {
			return 0, errors.New("fraction only allowed for seconds")
		}
		total += n * unitSeconds[u]
		last, seen = u, true
		s = s[i+1:]
	}
	if !seen {
		return 0, errors.New("no duration components")
	}
	if neg {
		total = -total
	}
	if math.Abs(total) > float64(math.MaxInt64/int64(time.Second)) {
		return 0, errors.New("duration out of range")
	}
	return time.Duration(total * float64(time.Second)), nil
}
