package clientmetrics

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"sharq/log/crc32c"
)

// Errors of Get and Push, one per Kafka error code the broker answers.
var (
	ErrThrottled              = errors.New("throttled")               // THROTTLING_QUOTA_EXCEEDED
	ErrUnknownSubscription    = errors.New("unknown subscription id") // UNKNOWN_SUBSCRIPTION_ID
	ErrUnsupportedCompression = errors.New("unsupported compression") // UNSUPPORTED_COMPRESSION_TYPE
	ErrTooLarge               = errors.New("telemetry too large")     // TELEMETRY_TOO_LARGE
	ErrInvalidRecord          = errors.New("invalid telemetry")       // INVALID_RECORD
)

// kafkaError carries Kafka's message for one of the errors above.
type kafkaError struct {
	msg  string
	kind error
}

func (e *kafkaError) Error() string { return e.msg }
func (e *kafkaError) Unwrap() error { return e.kind }
func kerrorf(kind error, format string, a ...any) error {
	return &kafkaError{fmt.Sprintf(format, a...), kind}
}

// Bounds on what pushed metrics may cost: a client instance keeps at most
// MaxSeriesPerInstance series and all of them together MaxSeries; points
// beyond are dropped and counted. MaxInstances is Kafka's client instance
// cache size.
const (
	MaxSeriesPerInstance = 2000
	MaxSeries            = 100000
	MaxInstances         = 16384
	// minExpiry is how long an instance without requests lives at least
	// (Kafka: max(60 s, 3 push intervals)).
	minExpiry = 60 * time.Second
)

// Compression codecs Kafka accepts for telemetry, in its order of
// preference: zstd, lz4, gzip, snappy.
var AcceptedCompression = []int8{4, 3, 1, 2}

// UUID is a client instance id.
type UUID [16]byte

// String renders a UUID as Kafka's Uuid.toString does (URL-safe base64,
// no padding).
func (u UUID) String() string { return kafkaUUIDString(u) }

// hashCode is Kafka's Uuid.hashCode: the xor of the two longs, folded.
func (u UUID) hashCode() int32 {
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(u[i])
		lo = lo<<8 | uint64(u[8+i])
	}
	h := hi ^ lo
	return int32(h>>32) ^ int32(h)
}

// Subscription is what GetTelemetrySubscriptions answers.
type Subscription struct {
	InstanceID     UUID
	SubscriptionID int32
	Metrics        []string
	PushIntervalMs int32
	MaxBytes       int32
}

// PushRequest is one PushTelemetry request.
type PushRequest struct {
	InstanceID     UUID
	SubscriptionID int32
	Terminating    bool
	Compression    int8
	Metrics        []byte // as sent (compressed with Compression)
}

// Decompressor decompresses a payload of codec (Kafka's ids; 0 = none)
// into at most limit bytes; beyond the limit it fails with ErrTooLarge.
type Decompressor func(codec int8, p []byte, limit int) ([]byte, error)

type series struct {
	name, attrs string
	value       float64
}

type instance struct {
	id         UUID
	client     Client
	conn       uint64
	subID      int32
	version    uint64
	metrics    []string
	intervalMs int32
	lastGet    int64 // unix ms; 0 = never
	lastPush   int64
	terminated bool
	lastErr    error // the error kind of the last request, nil = none
	seen       time.Time
	series     map[string]*series // by name + "\x00" + attrs
}

// Manager holds the client instances of this broker. Safe for concurrent
// use.
type Manager struct {
	maxBytes int32

	mu        sync.Mutex
	subsRaw   map[string]map[string]string // what subs was parsed from
	subs      []subscription
	version   uint64 // bumped when subs change
	instances map[UUID]*instance
	byConn    map[uint64]UUID
	nSeries   int
	dropped   uint64
}

// New returns a Manager answering telemetry.max.bytes = maxBytes.
func New(maxBytes int32) *Manager {
	return &Manager{maxBytes: maxBytes, instances: map[UUID]*instance{}, byConn: map[uint64]UUID{}}
}

// syncSubsLocked re-parses the subscriptions when the stored ones changed.
// Stored subscriptions were validated when altered; one that no longer
// parses is skipped rather than failing every client.
func (m *Manager) syncSubsLocked(raw map[string]map[string]string) {
	if maps.EqualFunc(raw, m.subsRaw, func(a, b map[string]string) bool { return maps.Equal(a, b) }) && m.subsRaw != nil {
		return
	}
	m.subsRaw = raw
	if m.subsRaw == nil {
		m.subsRaw = map[string]map[string]string{}
	}
	m.subs = m.subs[:0]
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if s, err := parseSubscription(n, raw[n]); err == nil {
			m.subs = append(m.subs, s)
		}
	}
	m.version++
}

// evaluateLocked builds a client instance's subscription: the union of the
// metrics of every subscription it matches ("*" alone if any has it), the
// shortest of their intervals.
func (m *Manager) evaluateLocked(id UUID, c Client) *instance {
	in := &instance{id: id, client: c, version: m.version, intervalMs: DefaultIntervalMs}
	set := map[string]bool{}
	all := false
	for _, s := range m.subs {
		if !s.matches(c) {
			continue
		}
		for _, x := range s.metrics {
			set[x] = true
			all = all || x == AllMetrics
		}
		in.intervalMs = min(in.intervalMs, s.intervalMs)
	}
	if all {
		set = map[string]bool{AllMetrics: true}
	}
	for x := range set {
		in.metrics = append(in.metrics, x)
	}
	sort.Strings(in.metrics)
	// Kafka: CRC32C of the metrics set's text and the interval, xor the
	// instance id's hash. The text of Java's HashSet differs in order, so
	// the ids differ from Kafka's; clients only compare them for equality.
	text := "[" + strings.Join(in.metrics, ", ") + "]" + fmt.Sprint(in.intervalMs)
	in.subID = int32(crc32c.Checksum([]byte(text))) ^ id.hashCode()
	return in
}

// instanceLocked returns the instance of id, created or re-evaluated when
// subscriptions changed, and bound to conn.
func (m *Manager) instanceLocked(now time.Time, id UUID, c Client, conn uint64) *instance {
	in := m.instances[id]
	switch {
	case in == nil:
		if len(m.instances) >= MaxInstances {
			m.evictOldestLocked()
		}
		in = m.evaluateLocked(id, c)
		in.series = map[string]*series{}
		m.instances[id] = in
	case in.version < m.version:
		// A re-evaluated instance starts afresh (no throttling), as in
		// Kafka; what it pushed so far is kept.
		next := m.evaluateLocked(id, in.client)
		next.series, next.conn = in.series, in.conn
		m.instances[id] = next
		in = next
	}
	if in.conn != conn {
		if in.conn != 0 && m.byConn[in.conn] == id {
			delete(m.byConn, in.conn)
		}
		in.conn = conn
		m.byConn[conn] = id
	}
	in.seen = now
	return in
}

func (m *Manager) evictOldestLocked() {
	var oldest *instance
	for _, in := range m.instances {
		if oldest == nil || in.seen.Before(oldest.seen) {
			oldest = in
		}
	}
	if oldest != nil {
		m.dropLocked(oldest)
	}
}

func (m *Manager) dropLocked(in *instance) {
	m.nSeries -= len(in.series)
	delete(m.instances, in.id)
	if m.byConn[in.conn] == in.id {
		delete(m.byConn, in.conn)
	}
}

// Get answers GetTelemetrySubscriptions for id (zero = assign one) from
// the stored subscriptions subs.
func (m *Manager) Get(now time.Time, subs map[string]map[string]string, id UUID, c Client, conn uint64) (Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked(now)
	m.syncSubsLocked(subs)
	if id == (UUID{}) {
		for {
			rand.Read(id[:])
			if _, taken := m.instances[id]; !taken && id != (UUID{}) {
				break
			}
		}
	}
	c.InstanceID = id.String()
	in := m.instanceLocked(now, id, c, conn)
	ms := now.UnixMilli()
	if ms-max(in.lastGet, in.lastPush) >= int64(in.intervalMs) {
		in.lastGet = ms
	} else if !errors.Is(in.lastErr, ErrUnknownSubscription) && !errors.Is(in.lastErr, ErrUnsupportedCompression) {
		in.lastErr = ErrThrottled
		return Subscription{}, kerrorf(ErrThrottled, "Request from the client [%s] arrived before the next push interval time", id)
	}
	in.lastErr = nil
	return Subscription{
		InstanceID:     id,
		SubscriptionID: in.subID,
		Metrics:        append([]string(nil), in.metrics...),
		PushIntervalMs: in.intervalMs,
		MaxBytes:       m.maxBytes,
	}, nil
}

// Push answers PushTelemetry and keeps the pushed points, decoded into
// strings: p.Metrics (and what decompress returns) is not kept past the
// call.
func (m *Manager) Push(now time.Time, subs map[string]map[string]string, p PushRequest, c Client, conn uint64, decompress Decompressor) error {
	if p.InstanceID == (UUID{}) || p.InstanceID == metadataTopicID {
		return kerrorf(ErrInvalidRequest, "Invalid request from the client [%s], invalid client instance id", p.InstanceID)
	}
	m.mu.Lock()
	m.expireLocked(now)
	m.syncSubsLocked(subs)
	c.InstanceID = p.InstanceID.String()
	in := m.instanceLocked(now, p.InstanceID, c, conn)
	err := m.validatePushLocked(now, in, p)
	in.terminated = in.terminated || p.Terminating
	if err != nil {
		in.lastErr = err
		m.mu.Unlock()
		return err
	}
	m.mu.Unlock()

	if len(p.Metrics) == 0 {
		return nil
	}
	// Decode outside the lock: a large payload must not stall other
	// clients' requests.
	raw, err := decompress(p.Compression, p.Metrics, int(m.maxBytes))
	var points []Point
	if err == nil {
		err = DecodeMetrics(raw, func(pt Point) { points = append(points, pt) })
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case errors.Is(err, ErrTooLarge):
		err = kerrorf(ErrTooLarge, "Telemetry request from [%s] is larger than the maximum allowed size [%d]", p.InstanceID, m.maxBytes)
	case err != nil:
		err = kerrorf(ErrInvalidRecord, "Telemetry request from [%s] could not be read: %v", p.InstanceID, err)
	}
	if err != nil {
		in.lastErr = err
		return err
	}
	if m.instances[p.InstanceID] == in {
		for _, pt := range points {
			m.recordLocked(in, pt)
		}
	}
	in.lastErr = nil
	return nil
}

func (m *Manager) validatePushLocked(now time.Time, in *instance, p PushRequest) error {
	id := p.InstanceID
	if in.terminated {
		return kerrorf(ErrInvalidRequest, "Client [%s] sent the previous request with state terminating to TRUE, can not accept any requests after that", id)
	}
	ms := now.UnixMilli()
	accept := in.lastGet > in.lastPush || ms-in.lastPush >= int64(in.intervalMs)
	if accept {
		in.lastPush = ms
	} else if !p.Terminating {
		return kerrorf(ErrThrottled, "Request from the client [%s] arrived before the next push interval time", id)
	}
	if p.SubscriptionID != in.subID {
		return kerrorf(ErrUnknownSubscription, "Unknown client subscription id for the client [%s]", id)
	}
	if p.Compression < 0 || p.Compression > 4 {
		return kerrorf(ErrUnsupportedCompression, "Unknown compression type [%d] is received in telemetry request from [%s]", p.Compression, id)
	}
	if len(p.Metrics) > int(m.maxBytes) {
		return kerrorf(ErrTooLarge, "Telemetry request from [%s] is larger than the maximum allowed size [%d]", id, m.maxBytes)
	}
	return nil
}

func (m *Manager) recordLocked(in *instance, pt Point) {
	key := pt.Name + "\x00" + pt.Attrs
	s := in.series[key]
	if s == nil {
		if len(in.series) >= MaxSeriesPerInstance || m.nSeries >= MaxSeries {
			m.dropped++
			return
		}
		s = &series{name: pt.Name, attrs: pt.Attrs}
		in.series[key] = s
		m.nSeries++
	}
	if pt.Delta {
		s.value += pt.Value
	} else {
		s.value = pt.Value
	}
}

// expireLocked drops instances without a request for max(60 s, 3 push
// intervals), as Kafka's expiration timer does.
func (m *Manager) expireLocked(now time.Time) {
	for _, in := range m.instances {
		ttl := max(minExpiry, 3*time.Duration(in.intervalMs)*time.Millisecond)
		if now.Sub(in.seen) >= ttl {
			m.dropLocked(in)
		}
	}
}

// ConnClosed forgets the instance last seen on conn: its client is gone
// (Kafka drops it on disconnect too).
func (m *Manager) ConnClosed(conn uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.byConn[conn]; ok {
		if in := m.instances[id]; in != nil {
			m.dropLocked(in)
		}
		delete(m.byConn, conn)
	}
}

// Sample is one series for the metrics listener.
type Sample struct {
	InstanceID, ClientID, Name, Attrs string
	Value                             float64
}

// Stats are the manager's own counters.
type Stats struct {
	Instances int
	Series    int
	Dropped   uint64
}

// Collect expires what is due and calls fn for every series.
func (m *Manager) Collect(now time.Time, fn func(Sample)) Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireLocked(now)
	for _, in := range m.instances {
		id := in.id.String()
		for _, s := range in.series {
			fn(Sample{InstanceID: id, ClientID: in.client.ClientID, Name: s.name, Attrs: s.attrs, Value: s.value})
		}
	}
	return Stats{Instances: len(m.instances), Series: m.nSeries, Dropped: m.dropped}
}

// metadataTopicID is Kafka's Uuid.METADATA_TOPIC_ID (0...01), one of the
// reserved ids a client instance may not use (with the zero id).
var metadataTopicID = UUID{15: 1}

func kafkaUUIDString(u UUID) string { return base64.RawURLEncoding.EncodeToString(u[:]) }
