package clientmetrics

// A reader for the part of OpenTelemetry's MetricsData (OTLP protobuf,
// opentelemetry/proto/metrics/v1/metrics.proto) that KIP-714 clients push:
// number data points of gauges and sums, with their attributes and the
// resource's attributes. Histograms and summaries are skipped (Kafka's
// clients do not send them). Field numbers used:
//
//	MetricsData      1 resource_metrics (ResourceMetrics)
//	ResourceMetrics  1 resource (Resource), 2 scope_metrics (ScopeMetrics)
//	Resource         1 attributes (KeyValue)
//	ScopeMetrics     2 metrics (Metric)
//	Metric           1 name, 5 gauge (Gauge), 7 sum (Sum)
//	Gauge            1 data_points (NumberDataPoint)
//	Sum              1 data_points, 2 aggregation_temporality (1 delta,
//	                 2 cumulative), 3 is_monotonic
//	NumberDataPoint  7 attributes (KeyValue), 4 as_double (fixed64),
//	                 6 as_int (sfixed64)
//	KeyValue         1 key, 2 value (AnyValue)
//	AnyValue         1 string, 2 bool, 3 int64, 4 double, others skipped
//
// Everything else is skipped by wire type. Malformed input is an error,
// never a panic; no input makes the reader allocate more than its length in
// attribute text.

import (
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrMalformed: the payload is not valid OTLP protobuf.
var ErrMalformed = errors.New("malformed OTLP metrics")

// Point is one number data point.
type Point struct {
	Name  string
	Attrs string // "k=v,k=v", sorted by key; data point then resource attributes
	Value float64
	// Delta is a delta-temporality sum: Value adds to what was there.
	Delta bool
}

// pbField is one decoded protobuf field.
type pbField struct {
	num  uint64
	wire uint8
	v    uint64 // varint, fixed64, fixed32
	b    []byte // length-delimited
}

// pbNext reads the field at b's start and returns the rest.
func pbNext(b []byte) (pbField, []byte, error) {
	key, n := binary.Uvarint(b)
	if n <= 0 {
		return pbField{}, nil, ErrMalformed
	}
	b = b[n:]
	f := pbField{num: key >> 3, wire: uint8(key & 7)}
	if f.num == 0 {
		return pbField{}, nil, ErrMalformed
	}
	switch f.wire {
	case 0:
		f.v, n = binary.Uvarint(b)
		if n <= 0 {
			return pbField{}, nil, ErrMalformed
		}
		return f, b[n:], nil
	case 1:
		if len(b) < 8 {
			return pbField{}, nil, ErrMalformed
		}
		f.v = binary.LittleEndian.Uint64(b)
		return f, b[8:], nil
	case 2:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return pbField{}, nil, ErrMalformed
		}
		f.b = b[n : n+int(l)]
		return f, b[n+int(l):], nil
	case 5:
		if len(b) < 4 {
			return pbField{}, nil, ErrMalformed
		}
		f.v = uint64(binary.LittleEndian.Uint32(b))
		return f, b[4:], nil
	}
	return pbField{}, nil, ErrMalformed // groups (3, 4) and unknown wire types
}

// pbEach calls fn for every field of message b.
func pbEach(b []byte, fn func(pbField) error) error {
	for len(b) > 0 {
		f, rest, err := pbNext(b)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// DecodeMetrics calls fn for every number data point in an OTLP
// MetricsData payload (uncompressed).
func DecodeMetrics(b []byte, fn func(Point)) error {
	return pbEach(b, func(f pbField) error {
		if f.num != 1 || f.wire != 2 {
			return nil
		}
		return decodeResourceMetrics(f.b, fn)
	})
}

func decodeResourceMetrics(b []byte, fn func(Point)) error {
	var resAttrs []string
	var scopes [][]byte
	err := pbEach(b, func(f pbField) error {
		if f.wire != 2 {
			return nil
		}
		switch f.num {
		case 1:
			return pbEach(f.b, func(f pbField) error {
				if f.num == 1 && f.wire == 2 {
					kv, err := decodeKeyValue(f.b)
					if err != nil {
						return err
					}
					resAttrs = append(resAttrs, kv)
				}
				return nil
			})
		case 2:
			scopes = append(scopes, f.b) // the resource may come after them
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, s := range scopes {
		err := pbEach(s, func(f pbField) error {
			if f.num == 2 && f.wire == 2 {
				return decodeMetric(f.b, resAttrs, fn)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func decodeMetric(b []byte, resAttrs []string, fn func(Point)) error {
	var name string
	var data []byte
	sum := false
	err := pbEach(b, func(f pbField) error {
		if f.wire != 2 {
			return nil
		}
		switch f.num {
		case 1:
			name = string(f.b)
		case 5:
			data, sum = f.b, false
		case 7:
			data, sum = f.b, true
		}
		return nil
	})
	if err != nil || data == nil {
		return err
	}
	delta := false
	var points [][]byte
	err = pbEach(data, func(f pbField) error {
		switch {
		case f.num == 1 && f.wire == 2:
			points = append(points, f.b)
		case sum && f.num == 2 && f.wire == 0:
			delta = f.v == 1 // AGGREGATION_TEMPORALITY_DELTA
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range points {
		pt := Point{Name: name, Delta: delta}
		attrs := append([]string(nil), resAttrs...)
		has := false
		err := pbEach(p, func(f pbField) error {
			switch {
			case f.num == 7 && f.wire == 2:
				kv, err := decodeKeyValue(f.b)
				if err != nil {
					return err
				}
				attrs = append(attrs, kv)
			case f.num == 4 && f.wire == 1:
				pt.Value, has = math.Float64frombits(f.v), true
			case f.num == 6 && f.wire == 1:
				pt.Value, has = float64(int64(f.v)), true
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !has {
			continue // a point without a value (NO_RECORDED_VALUE)
		}
		sort.Strings(attrs)
		pt.Attrs = strings.Join(attrs, ",")
		fn(pt)
	}
	return nil
}

// decodeKeyValue renders a KeyValue as "key=value".
func decodeKeyValue(b []byte) (string, error) {
	var key, val string
	err := pbEach(b, func(f pbField) error {
		switch {
		case f.num == 1 && f.wire == 2:
			key = string(f.b)
		case f.num == 2 && f.wire == 2:
			return pbEach(f.b, func(f pbField) error {
				switch {
				case f.num == 1 && f.wire == 2:
					val = string(f.b)
				case f.num == 2 && f.wire == 0:
					val = strconv.FormatBool(f.v != 0)
				case f.num == 3 && f.wire == 0:
					val = strconv.FormatInt(int64(f.v), 10)
				case f.num == 4 && f.wire == 1:
					val = strconv.FormatFloat(math.Float64frombits(f.v), 'g', -1, 64)
				}
				return nil
			})
		}
		return nil
	})
	return key + "=" + val, err
}
