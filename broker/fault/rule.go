// Package fault is the rule engine of sharq's fault injection: rules with
// filters (API and version, node, client id, topic, partition, group,
// transactional id, principal) and an effect (an error code, latency, no
// answer, a closed connection, a throttle), matched against a plain
// description of a request and counted. It knows nothing of sockets or of
// kmsg's request structs: the broker describes each request (Request),
// asks Set.Match which rule fires, and applies the effect on the wire
// (broker/faults.go). docs/faults.md is the user's reference.
package fault

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Rule is one fault rule as the control API and sharq.faults take it, e.g.
// {"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","count":3}. Every
// filter left out matches anything; every set filter must match.
type Rule struct {
	// ID is assigned by Set.Add; a rule given with an id keeps it (it must
	// be unused).
	ID int64 `json:"id,omitempty"`

	// Filters.
	API             *APIKey `json:"api,omitempty"`         // Kafka name ("Produce") or number (0)
	MinVersion      *int16  `json:"min_version,omitempty"` // inclusive
	MaxVersion      *int16  `json:"max_version,omitempty"` // inclusive
	Node            *int32  `json:"node,omitempty"`        // the node id the connection was accepted on
	ClientID        string  `json:"client_id,omitempty"`
	Topic           string  `json:"topic,omitempty"`
	TopicID         string  `json:"topic_id,omitempty"` // Kafka's base64 form of the UUID
	Partition       *int32  `json:"partition,omitempty"`
	Group           string  `json:"group,omitempty"`
	TransactionalID string  `json:"transactional_id,omitempty"`
	Principal       string  `json:"principal,omitempty"` // e.g. User:alice

	// Effects: at least one.
	Error *ErrorCode `json:"error,omitempty"` // Kafka name or number
	// Scope is where Error goes: "request" (the top-level error code, the
	// request not served) or "entity" (each matching topic-partition
	// errs, the others served for real). Empty: entity when the rule
	// filters by topic, topic_id or partition or the API has no top-level
	// error code, else request.
	Scope string `json:"scope,omitempty"`
	// After: serve the request for real, then answer Error (or, with
	// Close, close the connection instead of answering).
	After      bool  `json:"after,omitempty"`
	LatencyMs  int64 `json:"latency_ms,omitempty"`  // delay before the request is served
	NoAnswer   bool  `json:"no_answer,omitempty"`   // never answer; the request hangs until the client gives up
	Close      bool  `json:"close,omitempty"`       // close the connection (before serving it unless After)
	ThrottleMs int32 `json:"throttle_ms,omitempty"` // throttle_time_ms in the answer

	// How often: Count hits then the rule is done (0: until removed);
	// Fraction of the matching requests hit (0 or 1: all), drawn from a
	// generator seeded with Seed (0: the rule's id), so a run repeats.
	Count    int64   `json:"count,omitempty"`
	Fraction float64 `json:"fraction,omitempty"`
	Seed     uint64  `json:"seed,omitempty"`

	topicID [16]byte // TopicID decoded
}

// Scopes of Rule.Scope.
const (
	ScopeRequest = "request"
	ScopeEntity  = "entity"
)

// maxLatencyMs bounds latency_ms: a longer wait is a hang (no_answer).
const maxLatencyMs = 10 * 60 * 1000

// APIKey is a Kafka API key, written as its Kafka name.
type APIKey int16

// ErrorCode is a Kafka error code, written as its Kafka name.
type ErrorCode int16

var (
	apiByName   = map[string]int16{}
	errorByName = map[string]int16{}
	// kafkaErrorNames are Kafka's names where kerr keeps an older one
	// (which is accepted too).
	kafkaErrorNames = map[int16]string{6: "NOT_LEADER_OR_FOLLOWER"}
)

// ErrorName is Kafka's name of an error code.
func ErrorName(code int16) string {
	if n, ok := kafkaErrorNames[code]; ok {
		return n
	}
	if e := kerr.TypedErrorForCode(code); e != nil && e.Code == code {
		return e.Message
	}
	return strconv.Itoa(int(code))
}

func init() {
	for k := int16(0); k <= 127; k++ {
		if n := kmsg.NameForKey(k); n != "" && kmsg.RequestForKey(k) != nil {
			apiByName[strings.ToLower(n)] = k
		}
	}
	for c := int16(-1); c < 256; c++ {
		if e := kerr.TypedErrorForCode(c); e != nil && (e.Code == c) {
			errorByName[strings.ToLower(e.Message)] = c
		}
	}
	for c, n := range kafkaErrorNames {
		errorByName[strings.ToLower(n)] = c
	}
}

// ParseAPI takes a Kafka API name (any case) or number.
func ParseAPI(s string) (int16, error) {
	if n, err := strconv.ParseInt(s, 10, 16); err == nil {
		if n < 0 || n > 127 || kmsg.RequestForKey(int16(n)) == nil {
			return 0, fmt.Errorf("unknown API key %d", n)
		}
		return int16(n), nil
	}
	if k, ok := apiByName[strings.ToLower(s)]; ok {
		return k, nil
	}
	return 0, fmt.Errorf("unknown API %q (a Kafka API name such as Produce, or its key)", s)
}

// ParseError takes a Kafka error name (any case) or code.
func ParseError(s string) (int16, error) {
	if n, err := strconv.ParseInt(s, 10, 16); err == nil {
		if n == 0 {
			return 0, errors.New("error code 0 is no error")
		}
		if e := kerr.TypedErrorForCode(int16(n)); e == nil || e.Code != int16(n) {
			return 0, fmt.Errorf("unknown Kafka error code %d", n)
		}
		return int16(n), nil
	}
	if c, ok := errorByName[strings.ToLower(s)]; ok {
		return c, nil
	}
	return 0, fmt.Errorf("unknown Kafka error %q (a name such as NOT_LEADER_OR_FOLLOWER, or its code)", s)
}

// nameOrNumber reads a JSON string or number as a string.
func nameOrNumber(b []byte) (string, error) {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return "", errors.New("want a name or a number")
	}
	return n.String(), nil
}

func (k *APIKey) UnmarshalJSON(b []byte) error {
	s, err := nameOrNumber(b)
	if err != nil {
		return fmt.Errorf("api: %w", err)
	}
	v, err := ParseAPI(s)
	*k = APIKey(v)
	return err
}

func (k APIKey) MarshalJSON() ([]byte, error) { return json.Marshal(kmsg.NameForKey(int16(k))) }

func (e *ErrorCode) UnmarshalJSON(b []byte) error {
	s, err := nameOrNumber(b)
	if err != nil {
		return fmt.Errorf("error: %w", err)
	}
	v, err := ParseError(s)
	*e = ErrorCode(v)
	return err
}

func (e ErrorCode) MarshalJSON() ([]byte, error) {
	return json.Marshal(ErrorName(int16(e)))
}

// Errors answered after the request was applied: a timeout (Kafka answers
// it when a write or a metadata change was made but not confirmed in time)
// and, for Produce, the append that reached too few replicas.
var (
	requestTimedOut              = kerr.RequestTimedOut.Code
	notEnoughReplicasAfterAppend = kerr.NotEnoughReplicasAfterAppend.Code
)

// Check validates a rule on its own; the broker checks what depends on the
// API's shape (Set.Validate).
func (r *Rule) Check() error {
	if r.Error == nil && r.LatencyMs == 0 && !r.NoAnswer && !r.Close && r.ThrottleMs == 0 {
		return errors.New("no effect: set error, latency_ms, no_answer, close or throttle_ms")
	}
	switch {
	case r.NoAnswer && (r.Close || r.Error != nil || r.After):
		return errors.New("no_answer excludes close, error and after")
	case r.Close && r.Error != nil:
		return errors.New("close excludes error: the closed connection is the answer")
	case r.After && r.Error == nil && !r.Close:
		return errors.New("after needs error or close")
	case r.LatencyMs < 0 || r.LatencyMs > maxLatencyMs:
		return fmt.Errorf("latency_ms %d out of range 0-%d (use no_answer for a hang)", r.LatencyMs, maxLatencyMs)
	case r.ThrottleMs < 0:
		return fmt.Errorf("throttle_ms %d is negative", r.ThrottleMs)
	case r.Count < 0:
		return fmt.Errorf("count %d is negative (0: until removed)", r.Count)
	case r.Fraction < 0 || r.Fraction > 1 || r.Fraction != r.Fraction:
		return fmt.Errorf("fraction %v out of range 0-1", r.Fraction)
	case r.MinVersion != nil && *r.MinVersion < 0, r.MaxVersion != nil && *r.MaxVersion < 0:
		return errors.New("min_version and max_version are at least 0")
	case r.MinVersion != nil && r.MaxVersion != nil && *r.MinVersion > *r.MaxVersion:
		return fmt.Errorf("min_version %d above max_version %d", *r.MinVersion, *r.MaxVersion)
	case r.Partition != nil && *r.Partition < 0:
		return fmt.Errorf("partition %d is negative", *r.Partition)
	case r.Scope != "" && r.Scope != ScopeRequest && r.Scope != ScopeEntity:
		return fmt.Errorf("scope %q: want %q or %q", r.Scope, ScopeRequest, ScopeEntity)
	case r.Scope != "" && r.Error == nil:
		return errors.New("scope needs error")
	case r.Scope == ScopeRequest && r.entityFiltered():
		return errors.New(`scope "request" with a topic, topic_id or partition filter: the error would hit partitions the filter does not name; use scope "entity"`)
	}
	if r.After && r.Error != nil {
		switch c := int16(*r.Error); {
		case c == requestTimedOut:
		case c == notEnoughReplicasAfterAppend && r.API != nil && int16(*r.API) == 0:
		default:
			return errors.New("after answers REQUEST_TIMED_OUT (any API) or NOT_ENOUGH_REPLICAS_AFTER_APPEND (api Produce): Kafka answers no other error once a request was applied")
		}
	}
	if r.TopicID != "" {
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(r.TopicID, "="))
		if err != nil || len(b) != 16 {
			return fmt.Errorf("topic_id %q is not a topic id (Kafka's 22-character base64 form)", r.TopicID)
		}
		copy(r.topicID[:], b)
	}
	return nil
}

// entityFiltered reports whether the rule names topics or partitions.
func (r *Rule) entityFiltered() bool {
	return r.Topic != "" || r.TopicID != "" || r.Partition != nil
}

// EffectiveScope is where the rule's error goes for an API whose answer
// has (hasTop) or has not a top-level error code.
func (r *Rule) EffectiveScope(hasTop bool) string {
	switch {
	case r.Scope != "":
		return r.Scope
	case r.entityFiltered() || !hasTop:
		return ScopeEntity
	}
	return ScopeRequest
}

// Effect names what the rule does, for logs and metrics.
func (r *Rule) Effect() string {
	var parts []string
	if r.LatencyMs > 0 {
		parts = append(parts, "latency")
	}
	if r.ThrottleMs > 0 {
		parts = append(parts, "throttle")
	}
	switch {
	case r.NoAnswer:
		parts = append(parts, "no_answer")
	case r.Close && r.After:
		parts = append(parts, "close_after")
	case r.Close:
		parts = append(parts, "close")
	case r.Error != nil && r.After:
		parts = append(parts, "error_after")
	case r.Error != nil:
		parts = append(parts, "error")
	}
	return strings.Join(parts, "+")
}

// MatchEntity reports whether one topic-partition of a request matches the
// rule's topic, topic_id and partition filters (partition -1: the topic as
// a whole, which a partition filter does not match).
func (r *Rule) MatchEntity(e Entity) bool {
	if r.Topic != "" && e.Topic != r.Topic {
		return false
	}
	if r.TopicID != "" && e.TopicID != r.topicID {
		return false
	}
	return r.Partition == nil || e.Partition == *r.Partition
}

// ParseRules reads sharq.faults: a JSON array of rules, or one rule.
func ParseRules(s string) ([]Rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var rules []Rule
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if strings.HasPrefix(s, "{") {
		var r Rule
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("fault rule: %w", err)
		}
		rules = []Rule{r}
	} else if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("fault rules: %w", err)
	}
	for i := range rules {
		if err := rules[i].Check(); err != nil {
			return nil, fmt.Errorf("fault rule %d: %w", i+1, err)
		}
	}
	return rules, nil
}
