package clientmetrics

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  error
		msg   string
	}{
		{"sub", map[string]string{"metrics": "org.apache.kafka.", "interval.ms": "1000", "match": "client_id=app.*,client_software_name=apache-kafka-java"}, nil, ""},
		{"", map[string]string{"interval.ms": "1000"}, ErrInvalidRequest, "Subscription name can't be empty"},
		{"sub", map[string]string{"color": "red"}, ErrInvalidRequest, "Unknown client metrics configuration: color"},
		{"sub", map[string]string{"interval.ms": "99"}, ErrInvalidRequest, "Invalid value 99 for interval.ms, interval must be between 100 and 3600000 (1 hour)"},
		{"sub", map[string]string{"interval.ms": "3600001"}, ErrInvalidRequest, "Invalid value 3600001 for interval.ms, interval must be between 100 and 3600000 (1 hour)"},
		{"sub", map[string]string{"interval.ms": "x"}, ErrInvalidConfig, "Invalid value x for configuration interval.ms: Not a number of type INT"},
		{"sub", map[string]string{"match": "client_color=red"}, ErrInvalidConfig, "Illegal client matching pattern: client_color=red"},
		{"sub", map[string]string{"match": "client_id="}, ErrInvalidConfig, "Illegal client matching pattern: client_id="},
		{"sub", map[string]string{"match": "client_id=a=b"}, ErrInvalidConfig, "Illegal client matching pattern: client_id=a=b"},
		{"sub", map[string]string{"match": "client_id=a=="}, nil, ""}, // Java's split drops trailing empties
		{"sub", map[string]string{"match": "client_id=(("}, ErrInvalidConfig, "Illegal client matching pattern: client_id=(("},
	} {
		err := Validate(tc.name, tc.props)
		if !errors.Is(err, tc.want) || (err != nil && err.Error() != tc.msg) {
			t.Errorf("Validate(%q, %v) = %v, want %v %q", tc.name, tc.props, err, tc.want, tc.msg)
		}
	}
}

func TestMatching(t *testing.T) {
	c := Client{InstanceID: "abc", ClientID: "app-1", SoftwareName: "apache-kafka-java", SoftwareVersion: "4.4.0", SourceAddress: "127.0.0.1", SourcePort: "50000"}
	for _, tc := range []struct {
		match string
		want  bool
	}{
		{"", true},
		{"client_id=app-.*", true},
		{"client_id=app", false}, // the whole value must match
		{"client_id=app-.*,client_software_name=apache-kafka-java", true},
		{"client_id=app-.*,client_software_name=librdkafka", false},
		{"client_software_version=4\\.4\\..*", true},
		{"client_source_address=127\\.0\\.0\\.1,client_source_port=5000.", true},
		{"client_instance_id=abc", true},
	} {
		s, err := parseSubscription("s", map[string]string{"match": tc.match})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.matches(c); got != tc.want {
			t.Errorf("match %q = %v", tc.match, got)
		}
	}
	s, _ := parseSubscription("s", map[string]string{"match": "client_software_name=.*"})
	if s.matches(Client{ClientID: "x"}) {
		t.Error("a selector on an attribute the client did not send matched")
	}
}

func noDecompress(codec int8, p []byte, limit int) ([]byte, error) {
	if len(p) > limit {
		return nil, ErrTooLarge
	}
	return p, nil
}

func TestGetPushFlow(t *testing.T) {
	m := New(1 << 20)
	now := time.Unix(1000, 0)
	subs := map[string]map[string]string{
		"all":   {"metrics": "*", "interval.ms": "1000", "match": "client_id=app"},
		"other": {"metrics": "x.", "interval.ms": "500", "match": "client_id=other"},
	}
	c := Client{ClientID: "app", SoftwareName: "apache-kafka-java", SoftwareVersion: "4.4.0"}
	sub, err := m.Get(now, subs, UUID{}, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sub.InstanceID == (UUID{}) || sub.PushIntervalMs != 1000 || len(sub.Metrics) != 1 || sub.Metrics[0] != "*" || sub.MaxBytes != 1<<20 {
		t.Fatalf("subscription %+v", sub)
	}
	// A second Get within the interval is throttled.
	if _, err := m.Get(now.Add(10*time.Millisecond), subs, sub.InstanceID, c, 1); !errors.Is(err, ErrThrottled) {
		t.Fatalf("early get: %v", err)
	}
	payload := otlpPayload(t, "org.apache.kafka.producer.record.send.total", 5, true, "topic", "t1")
	push := PushRequest{InstanceID: sub.InstanceID, SubscriptionID: sub.SubscriptionID, Metrics: payload}
	// The first push right after a Get is accepted, the next one too early.
	if err := m.Push(now.Add(20*time.Millisecond), subs, push, c, 1, noDecompress); err != nil {
		t.Fatal(err)
	}
	if err := m.Push(now.Add(30*time.Millisecond), subs, push, c, 1, noDecompress); !errors.Is(err, ErrThrottled) {
		t.Fatalf("early push: %v", err)
	}
	// After the interval: accepted; a delta sum adds up.
	if err := m.Push(now.Add(1100*time.Millisecond), subs, push, c, 1, noDecompress); err != nil {
		t.Fatal(err)
	}
	var got []Sample
	st := m.Collect(now.Add(1200*time.Millisecond), func(s Sample) { got = append(got, s) })
	if len(got) != 1 || got[0].Value != 10 || got[0].Name != "org.apache.kafka.producer.record.send.total" || got[0].Attrs != "topic=t1" || got[0].ClientID != "app" || got[0].InstanceID != sub.InstanceID.String() {
		t.Fatalf("samples %+v", got)
	}
	if st.Instances != 1 || st.Series != 1 {
		t.Errorf("stats %+v", st)
	}
	// Wrong subscription id, unknown compression, too large.
	bad := push
	bad.SubscriptionID++
	if err := m.Push(now.Add(2200*time.Millisecond), subs, bad, c, 1, noDecompress); !errors.Is(err, ErrUnknownSubscription) {
		t.Errorf("wrong subscription id: %v", err)
	}
	// After UNKNOWN_SUBSCRIPTION_ID a Get is answered at once.
	if _, err := m.Get(now.Add(2300*time.Millisecond), subs, sub.InstanceID, c, 1); err != nil {
		t.Errorf("get after unknown subscription: %v", err)
	}
	bad = push
	bad.Compression = 9
	if err := m.Push(now.Add(3300*time.Millisecond), subs, bad, c, 1, noDecompress); !errors.Is(err, ErrUnsupportedCompression) {
		t.Errorf("compression 9: %v", err)
	}
	small := New(4)
	s2, _ := small.Get(now, subs, UUID{}, c, 2)
	if err := small.Push(now, subs, PushRequest{InstanceID: s2.InstanceID, SubscriptionID: s2.SubscriptionID, Metrics: payload}, c, 2, noDecompress); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v", err)
	}
	// Garbage is INVALID_RECORD.
	if _, err := m.Get(now.Add(5*time.Second), subs, sub.InstanceID, c, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Push(now.Add(5*time.Second), subs, PushRequest{InstanceID: sub.InstanceID, SubscriptionID: sub.SubscriptionID, Metrics: []byte{0xff}}, c, 1, noDecompress); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("garbage: %v", err)
	}
	// A zero instance id is INVALID_REQUEST.
	if err := m.Push(now, subs, PushRequest{}, c, 1, noDecompress); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("zero id: %v", err)
	}
	// Terminating: accepted even early, then nothing more.
	term := push
	term.Terminating = true
	if err := m.Push(now.Add(5100*time.Millisecond), subs, term, c, 1, noDecompress); err != nil {
		t.Errorf("terminating push: %v", err)
	}
	if err := m.Push(now.Add(9*time.Second), subs, push, c, 1, noDecompress); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("push after terminating: %v", err)
	}
	// Closing the connection drops the instance and its series.
	m.ConnClosed(1)
	if st := m.Collect(now.Add(9*time.Second), func(Sample) {}); st.Instances != 0 || st.Series != 0 {
		t.Errorf("after close: %+v", st)
	}
}

func TestSubscriptionChangeAndExpiry(t *testing.T) {
	m := New(1 << 20)
	now := time.Unix(1000, 0)
	c := Client{ClientID: "app"}
	sub, err := m.Get(now, nil, UUID{}, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if sub.PushIntervalMs != DefaultIntervalMs || len(sub.Metrics) != 0 {
		t.Fatalf("no subscription: %+v", sub)
	}
	// A new subscription is answered at once, with a new subscription id.
	subs := map[string]map[string]string{"s": {"metrics": "org.apache.kafka.consumer.", "interval.ms": "200"}}
	next, err := m.Get(now.Add(time.Millisecond), subs, sub.InstanceID, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if next.SubscriptionID == sub.SubscriptionID || next.PushIntervalMs != 200 || next.Metrics[0] != "org.apache.kafka.consumer." {
		t.Fatalf("after change: %+v (was %+v)", next, sub)
	}
	// Without requests for 60 s (> 3 intervals) the instance expires.
	if st := m.Collect(now.Add(61*time.Second), func(Sample) {}); st.Instances != 0 {
		t.Errorf("not expired: %+v", st)
	}
}

func TestSeriesBound(t *testing.T) {
	m := New(1 << 30)
	now := time.Unix(1000, 0)
	subs := map[string]map[string]string{"s": {"metrics": "*", "interval.ms": "100"}}
	sub, _ := m.Get(now, subs, UUID{}, Client{ClientID: "a"}, 1)
	var payload []byte
	for i := 0; i < MaxSeriesPerInstance+10; i++ {
		payload = append(payload, otlpPayload(t, "m", 1, false, "i", string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)))...)
	}
	if err := m.Push(now, subs, PushRequest{InstanceID: sub.InstanceID, SubscriptionID: sub.SubscriptionID, Metrics: payload}, Client{ClientID: "a"}, 1, noDecompress); err != nil {
		t.Fatal(err)
	}
	st := m.Collect(now, func(Sample) {})
	if st.Series != MaxSeriesPerInstance || st.Dropped != 10 {
		t.Errorf("stats %+v", st)
	}
}

func TestUUIDText(t *testing.T) {
	// Kafka's Uuid text is URL-safe base64 without padding.
	u := UUID{0xfb, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	if got := u.String(); got != "-_8BAgMEBQYHCAkKCwwNDg" {
		t.Errorf("String = %q", got)
	}
}

// ---- a minimal OTLP writer for the tests ----

func pbTag(b []byte, num, wire int) []byte { return binary.AppendUvarint(b, uint64(num<<3|wire)) }
func pbBytes(b []byte, num int, v []byte) []byte {
	b = pbTag(b, num, 2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// otlpPayload is a MetricsData with one metric and one point; sum with
// delta temporality when delta, else a gauge.
func otlpPayload(t testing.TB, name string, v float64, delta bool, attrKey, attrVal string) []byte {
	t.Helper()
	anyVal := pbBytes(nil, 1, []byte(attrVal))
	kv := pbBytes(pbBytes(nil, 1, []byte(attrKey)), 2, anyVal)
	pt := pbBytes(nil, 7, kv)
	pt = pbTag(pt, 4, 1)
	pt = binary.LittleEndian.AppendUint64(pt, math.Float64bits(v))
	data := pbBytes(nil, 1, pt)
	metric := pbBytes(nil, 1, []byte(name))
	if delta {
		data = pbTag(data, 2, 0)
		data = binary.AppendUvarint(data, 1)
		metric = pbBytes(metric, 7, data)
	} else {
		metric = pbBytes(metric, 5, data)
	}
	scope := pbBytes(nil, 2, metric)
	res := pbBytes(nil, 2, scope)
	return pbBytes(nil, 1, res)
}

func TestDecodeMetrics(t *testing.T) {
	p := otlpPayload(t, "g", 2.5, false, "node_id", "1")
	// An int point and a resource attribute, in a second ResourceMetrics.
	kv := pbBytes(pbBytes(nil, 1, []byte("client_id")), 2, pbBytes(nil, 1, []byte("app")))
	resource := pbBytes(nil, 1, kv)
	pt := pbTag(nil, 6, 1)
	pt = binary.LittleEndian.AppendUint64(pt, uint64(7))
	metric := pbBytes(pbBytes(nil, 1, []byte("i")), 5, pbBytes(nil, 1, pt))
	rm := pbBytes(pbBytes(nil, 2, pbBytes(nil, 2, metric)), 1, resource) // resource after the scope
	p = pbBytes(p, 1, rm)
	var got []Point
	if err := DecodeMetrics(p, func(pt Point) { got = append(got, pt) }); err != nil {
		t.Fatal(err)
	}
	want := []Point{{Name: "g", Attrs: "node_id=1", Value: 2.5}, {Name: "i", Attrs: "client_id=app", Value: 7}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v", got)
	}
	for _, bad := range [][]byte{{0x0a, 0x05, 0x01}, {0x0b}, {0x00}, {0x0a}} {
		if err := DecodeMetrics(bad, func(Point) {}); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}

// FuzzDecodeMetrics: pushed bytes never panic the reader, and whatever it
// accepts it accepts again with the same points.
func FuzzDecodeMetrics(f *testing.F) {
	f.Add(otlpPayload(f, "org.apache.kafka.producer.record.send.total", 5, true, "topic", "t1"))
	f.Add(otlpPayload(f, "g", 1, false, "", ""))
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var a, c []Point
		errA := DecodeMetrics(b, func(p Point) { a = append(a, p) })
		errC := DecodeMetrics(b, func(p Point) { c = append(c, p) })
		if (errA == nil) != (errC == nil) || len(a) != len(c) {
			t.Fatalf("not deterministic: %v %v", errA, errC)
		}
		for i := range a {
			if a[i] != c[i] && !(math.IsNaN(a[i].Value) && math.IsNaN(c[i].Value)) {
				t.Fatalf("point %d differs", i)
			}
		}
	})
}
