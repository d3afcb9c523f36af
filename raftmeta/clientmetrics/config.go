// Package clientmetrics implements KIP-714 client metrics on the broker
// side: subscriptions (Kafka's client-metrics config resource, stored in
// raftmeta as Image.ClientMetrics) matched to client instances by Kafka's
// selectors, the GetTelemetrySubscriptions / PushTelemetry rules (push
// interval, subscription ids, Kafka's error codes), and what the clients
// push (OpenTelemetry MetricsData) kept as bounded series that expire with
// the client. Kafka hands pushed metrics to a plugin; sharq keeps them for
// its Prometheus listener instead. Nothing here knows the wire.
package clientmetrics

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Config keys of a subscription, as Kafka names them.
const (
	KeyMetrics  = "metrics"
	KeyInterval = "interval.ms"
	KeyMatch    = "match"
)

// Keys lists the subscription keys in Kafka's order.
var Keys = []string{KeyMetrics, KeyInterval, KeyMatch}

// Selectors a match pattern may name.
const (
	SelInstanceID      = "client_instance_id"
	SelClientID        = "client_id"
	SelSoftwareName    = "client_software_name"
	SelSoftwareVersion = "client_software_version"
	SelSourceAddress   = "client_source_address"
	SelSourcePort      = "client_source_port"
)

var selectors = map[string]bool{
	SelInstanceID: true, SelClientID: true, SelSoftwareName: true,
	SelSoftwareVersion: true, SelSourceAddress: true, SelSourcePort: true,
}

const (
	// DefaultIntervalMs is the push interval of a client no subscription
	// matches, and of a subscription without interval.ms.
	DefaultIntervalMs = 5 * 60 * 1000
	minIntervalMs     = 100
	maxIntervalMs     = 3600000
	// AllMetrics in a metrics list subscribes to every metric.
	AllMetrics = "*"
)

// Errors of Validate; the broker maps them to Kafka codes (ErrInvalidRequest
// to INVALID_REQUEST, ErrInvalidConfig to INVALID_CONFIG) and sends the
// message as Kafka words it.
var (
	ErrInvalidRequest = errors.New("invalid client metrics request")
	ErrInvalidConfig  = errors.New("invalid client metrics config")
)

// validationError carries Kafka's message and the class of error.
type validationError struct {
	msg  string
	kind error
}

func (e *validationError) Error() string { return e.msg }
func (e *validationError) Unwrap() error { return e.kind }
func invalidRequest(format string, a ...any) error {
	return &validationError{fmt.Sprintf(format, a...), ErrInvalidRequest}
}
func invalidConfig(format string, a ...any) error {
	return &validationError{fmt.Sprintf(format, a...), ErrInvalidConfig}
}

// Validate checks a subscription's resulting key set as Kafka's
// ClientMetricsConfigs.validate does.
func Validate(name string, props map[string]string) error {
	if name == "" {
		return invalidRequest("Subscription name can't be empty")
	}
	for k := range props {
		if k != KeyMetrics && k != KeyInterval && k != KeyMatch {
			return invalidRequest("Unknown client metrics configuration: %s", k)
		}
	}
	if v, ok := props[KeyInterval]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return invalidConfig("Invalid value %s for configuration %s: Not a number of type INT", v, KeyInterval)
		}
		if n < minIntervalMs || n > maxIntervalMs {
			return invalidRequest("Invalid value %d for %s, interval must be between 100 and 3600000 (1 hour)", n, KeyInterval)
		}
	}
	if v, ok := props[KeyMatch]; ok {
		if _, err := parseMatch(splitList(v)); err != nil {
			return err
		}
	}
	return nil
}

// splitList splits a Kafka LIST value: comma-separated, trimmed, empty
// items dropped (an empty value is an empty list).
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseMatch parses "selector=regex" patterns. Kafka splits on every '=',
// so a pattern with a second '=' is illegal, and matches the whole value.
func parseMatch(patterns []string) (map[string]*regexp.Regexp, error) {
	out := make(map[string]*regexp.Regexp, len(patterns))
	for _, p := range patterns {
		parts := strings.Split(p, "=")
		// Java's String.split drops trailing empty parts: "a=b=" is legal
		// there, "a=" is not.
		for len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) != 2 {
			return nil, invalidConfig("Illegal client matching pattern: %s", p)
		}
		sel := strings.TrimSpace(parts[0])
		if !selectors[sel] {
			return nil, invalidConfig("Illegal client matching pattern: %s", p)
		}
		re, err := regexp.Compile(`^(?:` + strings.TrimSpace(parts[1]) + `)$`)
		if err != nil {
			return nil, invalidConfig("Illegal client matching pattern: %s", p)
		}
		out[sel] = re
	}
	return out, nil
}

// subscription is a parsed, valid subscription.
type subscription struct {
	name       string
	metrics    []string
	intervalMs int32
	match      map[string]*regexp.Regexp
}

func parseSubscription(name string, props map[string]string) (subscription, error) {
	if err := Validate(name, props); err != nil {
		return subscription{}, err
	}
	s := subscription{name: name, metrics: splitList(props[KeyMetrics]), intervalMs: DefaultIntervalMs}
	if v, ok := props[KeyInterval]; ok {
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		s.intervalMs = int32(n)
	}
	s.match, _ = parseMatch(splitList(props[KeyMatch]))
	return s, nil
}

// Client is what a client instance is matched on.
type Client struct {
	InstanceID      string // canonical Kafka Uuid text
	ClientID        string
	SoftwareName    string // "" when the client sent none (ApiVersions < v3)
	SoftwareVersion string
	SourceAddress   string
	SourcePort      string
}

func (c Client) attr(sel string) (string, bool) {
	switch sel {
	case SelInstanceID:
		return c.InstanceID, true
	case SelClientID:
		return c.ClientID, true
	case SelSoftwareName:
		return c.SoftwareName, c.SoftwareName != ""
	case SelSoftwareVersion:
		return c.SoftwareVersion, c.SoftwareVersion != ""
	case SelSourceAddress:
		return c.SourceAddress, c.SourceAddress != ""
	case SelSourcePort:
		return c.SourcePort, c.SourcePort != ""
	}
	return "", false
}

// matches: every pattern must fully match its attribute; no pattern
// matches every client, as in Kafka.
func (s subscription) matches(c Client) bool {
	for sel, re := range s.match {
		v, ok := c.attr(sel)
		if !ok || !re.MatchString(v) {
			return false
		}
	}
	return true
}
