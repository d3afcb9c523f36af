package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/raftmeta"
)

// FuzzRequests builds well-formed requests of every registered API and
// version with field values drawn from the fuzz input (negative and huge
// numbers, invalid UTF-8, nil versus empty arrays and strings), sends each
// through the real frame handler and requires a decodable answer. A panic
// fails the target (handleFrame is called directly, outside the
// connection's recover), and so does a request the broker closes the
// connection on: every handler answers bad values with error codes.
func FuzzRequests(f *testing.F) {
	apis := registeredAPIs()
	for i, e := range apis {
		for v := e.minVersion; v <= e.maxVersion; v++ {
			f.Add(uint8(i), uint8(v-e.minVersion), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
			f.Add(uint8(i), uint8(v-e.minVersion), bytes.Repeat([]byte{0xff, 0x03, 0x02}, 40))
		}
	}
	s := newFuzzServer(f)
	fuzzState(f, s)
	f.Fuzz(func(t *testing.T, api, version uint8, data []byte) {
		e := apis[int(api)%len(apis)]
		v := e.minVersion + int16(int(version)%int(e.maxVersion-e.minVersion+1))
		req := kmsg.RequestForKey(e.key)
		if d, ok := req.(interface{ Default() }); ok {
			d.Default()
		}
		src := &fuzzSource{b: data}
		src.fill(reflect.ValueOf(req).Elem(), 0)
		req.SetVersion(v)
		boundResources(req)

		fuzzRoundTrip(t, s, req, false)
	})
}

// fuzzRoundTrip sends req through handleFrame and returns the decoded answer
// (nil for a Produce with acks=0), failing t on anything else. A live
// conn waits for what the request waits for (a commit, a rebalance).
func fuzzRoundTrip(t testing.TB, s *Server, req kmsg.Request, live bool) kmsg.Response {
	t.Helper()
	key, v := req.Key(), req.GetVersion()
	frame := binary.BigEndian.AppendUint16(nil, uint16(key))
	frame = binary.BigEndian.AppendUint16(frame, uint16(v))
	frame = binary.BigEndian.AppendUint32(frame, 7) // correlation id
	frame = binary.BigEndian.AppendUint16(frame, 1)
	frame = append(frame, 'f')
	if req.IsFlexible() {
		frame = append(frame, 0)
	}
	frame = req.AppendTo(frame)

	c, out := newCaptureConn(t, s, live)
	if err := c.handleFrame(frame); err != nil {
		t.Fatalf("%s v%d closed the connection: %v\nrequest: %+v", kmsg.NameForKey(key), v, err, req)
	}
	if p, ok := req.(*kmsg.ProduceRequest); ok && p.Acks == 0 {
		return nil // acks=0: no answer
	}
	resp := out.frame(t)
	if resp == nil {
		t.Fatalf("%s v%d: no answer\nrequest: %+v", kmsg.NameForKey(key), v, req)
	}
	if got := int32(binary.BigEndian.Uint32(resp)); got != 7 {
		t.Fatalf("%s v%d: correlation id %d", kmsg.NameForKey(key), v, got)
	}
	body := resp[4:]
	kresp := req.ResponseKind()
	kresp.SetVersion(v)
	if kresp.IsFlexible() && key != apiVersionsKey {
		var err error
		if body, err = skipTags(body); err != nil {
			t.Fatalf("%s v%d: response header: %v", kmsg.NameForKey(key), v, err)
		}
	}
	if err := kresp.ReadFrom(body); err != nil {
		t.Fatalf("%s v%d: undecodable answer: %v\nrequest: %+v", kmsg.NameForKey(key), v, err, req)
	}
	return kresp
}

// fuzzState gives the fuzz inputs state to hit: topics "t" (3 partitions)
// and "topic" with records, a consumer group "g" with a commit, and a share
// group "s" whose member "m" has fetched from "t".
func fuzzState(tb testing.TB, s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.awaitCoordinators(ctx); err != nil {
		tb.Fatal(err)
	}
	// The server does not listen; register it so topics can be placed.
	if err := s.meta.RegisterBroker(ctx, raftmeta.Broker{NodeID: s.cfg.NodeID, Host: "127.0.0.1", Port: 9092}); err != nil {
		tb.Fatal(err)
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	for name, n := range map[string]int32{"t": 3, "topic": 1} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, n, 1
		ct.Topics = append(ct.Topics, rt)
	}
	ct.Version, ct.TimeoutMillis = 7, 10000
	if resp := fuzzRoundTrip(tb, s, ct, true).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != 0 || resp.Topics[1].ErrorCode != 0 {
		tb.Fatalf("create topics: %+v", resp.Topics)
	}

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation = 8, "g", -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 0}}}}
	fuzzRoundTrip(tb, s, oc, true)

	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.Version, hb.GroupID, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = 1, "s", "m", 0, []string{"t"}
	if resp := fuzzRoundTrip(tb, s, hb, true).(*kmsg.ShareGroupHeartbeatResponse); resp.ErrorCode != 0 {
		tb.Fatalf("share group heartbeat: %d", resp.ErrorCode)
	}
	img := s.meta.Image()
	sf := kmsg.NewPtrShareFetchRequest()
	sf.Version, sf.GroupID, sf.MemberID, sf.MaxBytes, sf.MaxRecords, sf.BatchSize = 1, kmsg.StringPtr("s"), kmsg.StringPtr("m"), 1<<20, 10, 10
	sf.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: img.Topics["t"].ID, Partitions: []kmsg.ShareFetchRequestTopicPartition{{Partition: 0}, {Partition: 1}}}}
	fuzzRoundTrip(tb, s, sf, true)
}

// boundResources keeps the partition counts a request asks for small: what
// the broker does with a request for more partitions than it can open is
// tested on its own, and here it would only make each input slow.
func boundResources(req kmsg.Request) {
	clamp := func(n *int32) {
		if *n > 4 {
			*n %= 4
		}
	}
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		for i := range r.Topics {
			clamp(&r.Topics[i].NumPartitions)
		}
	case *kmsg.CreatePartitionsRequest:
		for i := range r.Topics {
			clamp(&r.Topics[i].Count)
		}
	}
}

// fuzzSource hands out values from the fuzz input, then zeros.
type fuzzSource struct{ b []byte }

func (s *fuzzSource) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *fuzzSource) uint64() uint64 {
	var x uint64
	for range 8 {
		x = x<<8 | uint64(s.byte())
	}
	return x
}

// integer picks a value of the given bit size, biased to the edges where
// bounds checks go wrong.
func (s *fuzzSource) integer(bits int) int64 {
	switch s.byte() % 8 {
	case 0:
		return 0
	case 1:
		return -1
	case 2:
		return 1
	case 3:
		return int64(s.byte() % 8) // small and valid-looking
	case 4:
		return -int64(s.byte()) - 1
	case 5:
		return int64(uint64(1)<<(bits-1) - 1) // max
	case 6:
		return -int64(uint64(1) << (bits - 1)) // min
	default:
		x := int64(s.uint64())
		return x << (64 - bits) >> (64 - bits)
	}
}

// names are the strings most likely to hit existing state, so that inputs
// reach past "unknown topic" and "unknown group".
var fuzzNames = []string{"t", "g", "s", "topic", "m", "a.b", "a_b", "__consumer_offsets"}

func (s *fuzzSource) string() string {
	switch s.byte() % 8 {
	case 0:
		return ""
	case 1, 2, 3, 4:
		return fuzzNames[int(s.byte())%len(fuzzNames)]
	case 5:
		return "\xff\xfe" + fuzzNames[int(s.byte())%len(fuzzNames)]
	default:
		n := int(s.byte() % 24)
		b := make([]byte, 0, n)
		for range n {
			b = append(b, s.byte())
		}
		return string(b)
	}
}

var (
	tagsType = reflect.TypeOf(kmsg.Tags{})
	uuidType = reflect.TypeOf([16]byte{})
)

// fill sets every settable field of v from s.
func (s *fuzzSource) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == tagsType {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if ft := v.Type().Field(i); ft.IsExported() && !(depth == 0 && ft.Name == "Version") {
				s.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Bool:
		v.SetBool(s.byte()&1 == 1)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(s.integer(v.Type().Bits()))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(s.integer(v.Type().Bits())) & (math.MaxUint64 >> (64 - v.Type().Bits())))
	case reflect.Float64:
		v.SetFloat(math.Float64frombits(s.uint64()))
	case reflect.String:
		v.SetString(s.string())
	case reflect.Array:
		if v.Type() == uuidType && s.byte()%2 == 0 {
			return // the zero id
		}
		for i := 0; i < v.Len(); i++ {
			s.fill(v.Index(i), depth+1)
		}
	case reflect.Pointer:
		if s.byte()%3 == 0 || depth > 6 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		s.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		sel := s.byte()
		switch {
		case sel%5 == 0 || depth > 6:
			v.SetZero() // nil: a null array where the version allows it
			return
		case sel%5 == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		n := int(s.byte() % 4)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			n = int(s.byte() % 64)
		}
		sl := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			s.fill(sl.Index(i), depth+1)
		}
		v.Set(sl)
	}
}

// captureConn is a client socket that keeps what the broker writes.
type captureConn struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *captureConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(b)
}

func (c *captureConn) Read([]byte) (int, error) { return 0, net.ErrClosed }
func (c *captureConn) Close() error             { return nil }
func (c *captureConn) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9092}
}
func (c *captureConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
}
func (c *captureConn) SetDeadline(time.Time) error      { return nil }
func (c *captureConn) SetReadDeadline(time.Time) error  { return nil }
func (c *captureConn) SetWriteDeadline(time.Time) error { return nil }

// frame returns the first response frame written, without its size, or nil.
func (c *captureConn) frame(t testing.TB) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf.Bytes()
	if len(b) < 4 {
		return nil
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) != uint64(len(b)-4) {
		t.Fatalf("response frame declares %d bytes, %d written", n, len(b)-4)
	}
	return b[4:]
}

// newCaptureConn is a conn whose context, unless live, is already
// cancelled, so long-polls answer at once.
func newCaptureConn(t testing.TB, s *Server, live bool) (*conn, *captureConn) {
	nc := &captureConn{}
	c := s.newConn(nc, 0)
	if !live {
		c.cancel()
	}
	t.Cleanup(c.close)
	return c, nc
}
