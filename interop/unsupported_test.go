package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// scenarioUnsupportedKeys sends, on a fresh connection each, an ApiVersions
// v0, then a request the broker does not serve, then another ApiVersions,
// and records what came back: Kafka 4.4 answers the first and closes the
// connection on the second (an unknown API key, a key its broker listener
// does not enable, a version outside the range), which the golden diff
// holds sharq to. A key Kafka enables and sharq does not implement
// (DescribeDelegationToken) is logged, not recorded: Kafka answers it.
func scenarioUnsupportedKeys(t *testing.T, tg Target) {
	frame := func(key, version int16, corr int32) []byte {
		b := make([]byte, 4, 32)
		b = binary.BigEndian.AppendUint16(b, uint16(key))
		b = binary.BigEndian.AppendUint16(b, uint16(version))
		b = binary.BigEndian.AppendUint32(b, uint32(corr))
		b = binary.BigEndian.AppendUint16(b, 7)
		b = append(b, "interop"...)
		b = append(b, 0, 0, 0, 0)
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
		return b
	}
	probe := func(key, version int16) string {
		conn, err := net.DialTimeout("tcp", tg.Bootstrap, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		all := append(frame(18, 0, 1), frame(key, version, 2)...)
		all = append(all, frame(18, 0, 3)...)
		if _, err := conn.Write(all); err != nil {
			t.Fatal(err)
		}
		var out []string
		for {
			var hdr [4]byte
			if _, err := io.ReadFull(conn, hdr[:]); err != nil {
				var ne net.Error
				switch {
				case errors.As(err, &ne) && ne.Timeout():
					out = append(out, "no answer within 10 s")
				default:
					out = append(out, "connection closed")
				}
				return strings.Join(out, ", ")
			}
			body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
			if _, err := io.ReadFull(conn, body); err != nil {
				out = append(out, "truncated answer")
				continue
			}
			out = append(out, fmt.Sprintf("answer to correlation id %d", binary.BigEndian.Uint32(body)))
		}
	}
	var b strings.Builder
	for _, c := range []struct {
		name         string
		key, version int16
	}{
		{"unknown key 200", 200, 0},
		{"unknown key 127", 127, 0},
		{"negative key", -1, 0},
		{"Vote (controller only)", 52, 0},
		{"BrokerRegistration (controller only)", 62, 0},
		{"BrokerHeartbeat (controller only)", 63, 0},
		{"AllocateProducerIds (controller only)", 67, 0},
		{"Envelope (controller only)", 58, 0},
		{"Metadata v99", 3, 99},
		{"Produce v2", 0, 2},
	} {
		fmt.Fprintf(&b, "%s: %s\n", c.name, probe(c.key, c.version))
	}
	t.Logf("%s", b.String())
	t.Logf("DescribeDelegationToken v3 (not implemented by sharq): %s", probe(41, 3))
	if r := recorder(t); r != nil {
		if err := r.Record(tg.Name, "unsupported-keys/answers", b.String()); err != nil {
			t.Error(err)
		}
	}
}
