package broker_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// frame builds a request frame: size, key, version, correlation id, client
// id, then body (header tags are part of body for flexible versions).
func frame(key, version int16, corr int32, body []byte) []byte {
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 4)
	b = append(b, "test"...)
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// readResponse reads one response frame.
func readResponse(c net.Conn) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	b := make([]byte, n)
	_, err := io.ReadFull(c, b)
	return b, err
}

// expectClosed asserts the broker closed the connection (EOF, not a
// timeout).
func expectClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	_, err := readResponse(c)
	if err == nil {
		t.Fatalf("%s: got a response, want the connection closed", what)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: connection left open (timeout)", what)
	}
}

func TestMalformedFrames(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)

	apiVersionsV0 := frame(18, 0, 1, nil)
	cases := []struct {
		name  string
		bytes []byte
	}{
		{"absurd size", []byte{0x7f, 0xff, 0xff, 0xff, 0, 18, 0, 0}},
		{"negative size", []byte{0xff, 0xff, 0xff, 0xf0}},
		{"tiny size", []byte{0, 0, 0, 2, 0, 18}},
		{"unknown api key", frame(999, 0, 1, nil)},
		{"unregistered api key", frame(4, 0, 1, nil)}, // LeaderAndIsr: broker-internal
		{"unsupported fetch version", frame(1, 2, 1, nil)},
		{"garbage metadata body", frame(3, 12, 1, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})},
		{"truncated client id", func() []byte {
			f := frame(18, 0, 1, nil)
			binary.BigEndian.PutUint16(f[12:], 200)
			return f
		}()},
		{"http", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"tls", []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}},
	}
	for _, c := range cases {
		conn := dial(t, b.Addr)
		if _, err := conn.Write(c.bytes); err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		expectClosed(t, conn, c.name)

		// The broker keeps serving others.
		ok := dial(t, b.Addr)
		ok.Write(apiVersionsV0)
		resp, err := readResponse(ok)
		if err != nil {
			t.Fatalf("after %s: ApiVersions failed: %v", c.name, err)
		}
		if corr := binary.BigEndian.Uint32(resp); corr != 1 {
			t.Fatalf("after %s: correlation id %d", c.name, corr)
		}
	}
}

func TestApiVersionsUnsupportedVersion(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	conn := dial(t, b.Addr)
	// A future ApiVersions version: answered in v0 shape (KIP-511).
	conn.Write(frame(18, 99, 7, []byte{0, 0, 0}))
	resp, err := readResponse(conn)
	if err != nil {
		t.Fatal(err)
	}
	if corr := binary.BigEndian.Uint32(resp); corr != 7 {
		t.Fatalf("correlation id %d", corr)
	}
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 0
	if err := av.ReadFrom(resp[4:]); err != nil {
		t.Fatalf("decode v0 response: %v", err)
	}
	if av.ErrorCode != 35 { // UNSUPPORTED_VERSION
		t.Fatalf("error code %d, want 35", av.ErrorCode)
	}
	if len(av.ApiKeys) != 1 || av.ApiKeys[0].ApiKey != 18 || av.ApiKeys[0].MaxVersion != 5 {
		t.Fatalf("api keys %+v", av.ApiKeys)
	}
	// The connection stays usable.
	conn.Write(frame(18, 0, 8, nil))
	if _, err := readResponse(conn); err != nil {
		t.Fatalf("after unsupported version: %v", err)
	}
}

func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	conn := dial(t, b.Addr)
	var all []byte
	for i := int32(1); i <= 20; i++ {
		all = append(all, frame(18, 0, i, nil)...)
	}
	conn.Write(all)
	for i := int32(1); i <= 20; i++ {
		resp, err := readResponse(conn)
		if err != nil {
			t.Fatal(err)
		}
		if corr := int32(binary.BigEndian.Uint32(resp)); corr != i {
			t.Fatalf("response %d has correlation id %d", i, corr)
		}
	}
}

func TestIdleConnectionClosed(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.ConnectionsMaxIdleMs = 100 }))
	conn := dial(t, b.Addr)
	conn.Write(frame(18, 0, 1, nil))
	if _, err := readResponse(conn); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	expectClosed(t, conn, "idle connection")
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Fatalf("closed after %v, before connections.max.idle.ms", d)
	}
}

// ShareAcknowledge frames pipelined behind a parked Fetch are answered
// after it, in order: the reader handles a request itself only when the
// processor is idle.
func TestPipelinedBehindParkedFetchAnsweredInOrder(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	mustCreateTopic(t, newAdmin(t, b), "parked", 1, nil)
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version = 11
	fetch.ReplicaID, fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = -1, 300, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "parked"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	group, member := "g", "m"
	ack := kmsg.NewPtrShareAcknowledgeRequest()
	ack.Version = 1
	ack.GroupID, ack.MemberID, ack.ShareSessionEpoch = &group, &member, 1
	ackBody := append([]byte{0}, ack.AppendTo(nil)...) // request header v2: no tags

	conn := dial(t, b.Addr)
	all := frame(1, 11, 1, fetch.AppendTo(nil))
	all = append(all, frame(79, 1, 2, ackBody)...)
	all = append(all, frame(79, 1, 3, ackBody)...)
	all = append(all, frame(18, 0, 4, nil)...)
	start := time.Now()
	conn.Write(all)
	for i := int32(1); i <= 4; i++ {
		resp, err := readResponse(conn)
		if err != nil {
			t.Fatal(err)
		}
		if corr := int32(binary.BigEndian.Uint32(resp)); corr != i {
			t.Fatalf("response %d has correlation id %d", i, corr)
		}
		if i == 1 {
			if d := time.Since(start); d < 250*time.Millisecond {
				t.Fatalf("the Fetch was answered after %v: it did not park, so this proves nothing", d)
			}
		}
	}
}

// TestUnsupportedAPIKeys: Kafka 4.4 closes the connection, without an
// answer, on a request whose API key it does not know (RequestHeader.parse:
// InvalidRequestException "Unknown API key"), whose key it knows but does
// not enable on a broker listener (a controller-only API such as Vote or
// BrokerHeartbeat), or whose version it does not enable (SocketServer
// parseRequestHeader: "Received request api key ... which is not enabled";
// only ApiVersions is answered, in v0, see TestApiVersionsUnsupportedVersion).
// sharq does the same, and treats an API it does not implement as one it
// does not enable; a request sent ahead of the bad one is still answered.
// interop's unsupported-keys scenario sends the same frames to Kafka 4.4.
func TestUnsupportedAPIKeys(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	for _, c := range []struct {
		name         string
		key, version int16
	}{
		{"unknown key 200", 200, 0},
		{"unknown key 127", 127, 0},
		{"negative key", -1, 0},
		{"controller-only Vote", 52, 0},
		{"controller-only BrokerRegistration", 62, 0},
		{"controller-only BrokerHeartbeat", 63, 0},
		{"controller-only AllocateProducerIds", 67, 0},
		{"inter-broker Envelope", 58, 0},
		{"not implemented DescribeDelegationToken", 41, 3},
		{"Metadata v99", 3, 99},
		{"Produce v2 (removed in Kafka 4)", 0, 2},
	} {
		conn := dial(t, b.Addr)
		all := append(frame(18, 0, 1, nil), frame(c.key, c.version, 2, []byte{0, 0, 0, 0})...)
		all = append(all, frame(18, 0, 3, nil)...)
		if _, err := conn.Write(all); err != nil {
			t.Fatalf("%s: write: %v", c.name, err)
		}
		resp, err := readResponse(conn)
		if err != nil || binary.BigEndian.Uint32(resp) != 1 {
			t.Fatalf("%s: the request ahead was not answered: %v", c.name, err)
		}
		expectClosed(t, conn, c.name)
	}
}
