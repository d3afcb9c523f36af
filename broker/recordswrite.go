package broker

import (
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch and ShareFetch answers are mostly record bytes already read into the
// connection's fetch buffer. Encoding them with kmsg copies every byte into
// the response buffer (and grows it), which profiling showed as a quarter
// of the CPU of a franz-go consumer reading 1 KB records from sharq. Instead
// the response is encoded without its record bytes and written with
// writev: the encoded parts, and between them each partition's length
// prefix and its records, taken straight from the fetch buffer.
//
// Where the records go is found by encoding twice, once with every records
// field null and once with every one empty: the two encodings differ exactly
// in the records' length prefixes (int32 -1 vs 0, or in flexible versions
// uvarint 0 vs 1), in encoding order. kmsg stays the only encoder, so the
// bytes on the wire are what it would have written (recordswrite_test.go
// checks that for every version).

// zeroCopyMin is the record bytes below which a response is encoded in one
// piece: the second encoding and the extra iovecs cost more than a small
// copy.
const zeroCopyMin = 32 << 10

// recordsWriter holds a connection's scratch space for records-aware writes,
// reused from one response to the next.
type recordsWriter struct {
	fields  []*[]byte // the response's records fields, in encoding order
	saved   [][]byte  // their values while the encodings run
	empty   []byte    // the second encoding
	prefix  []byte    // length prefixes, one per non-null field
	iov     [][]byte  // what writev sends
	regions []int     // offset of each length prefix in the first encoding
}

// recordFields collects pointers to resp's records fields in the order kmsg
// encodes them; it returns false for responses that carry none.
func (w *recordsWriter) recordFields(resp kmsg.Response) bool {
	w.fields = w.fields[:0]
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				w.fields = append(w.fields, &r.Topics[i].Partitions[j].RecordBatches)
			}
		}
	case *kmsg.ShareFetchResponse:
		for i := range r.Topics {
			for j := range r.Topics[i].Partitions {
				w.fields = append(w.fields, &r.Topics[i].Partitions[j].Records)
			}
		}
	default:
		return false
	}
	return len(w.fields) > 0
}

// frame returns the response frame as buffers for writev, with head (the
// size, correlation id and header tags, size not yet filled) in front, and
// the frame's total length. ok is false when the response should be
// encoded in one piece instead; head is then untouched.
func (w *recordsWriter) frame(head []byte, resp kmsg.Response, flexible bool) (bufs [][]byte, total int, enc []byte, ok bool) {
	if !w.recordFields(resp) {
		return nil, 0, head, false
	}
	records := 0
	for _, f := range w.fields {
		records += len(*f)
	}
	if records < zeroCopyMin {
		return nil, 0, head, false
	}
	w.saved = w.saved[:0]
	for _, f := range w.fields {
		w.saved = append(w.saved, *f)
		*f = nil
	}
	start := len(head)
	enc = resp.AppendTo(head)
	for _, f := range w.fields {
		*f = []byte{}
	}
	w.empty = resp.AppendTo(w.empty[:0])
	for i, f := range w.fields {
		*f = w.saved[i]
	}
	width := 4 // int32 length
	if flexible {
		width = 1 // uvarint 0 (null) or 1 (empty)
	}
	if !w.findPrefixes(enc[start:], w.empty, width) {
		return nil, 0, enc[:start], false
	}

	// Prefixes are at most 5 bytes; size the slice once so that the
	// sub-slices handed to writev never move.
	if need := 5 * len(w.fields); cap(w.prefix) < need {
		w.prefix = make([]byte, 0, need)
	}
	w.prefix = w.prefix[:0]
	w.iov = w.iov[:0]
	total = len(enc) - 4 // the size field does not count itself
	from := 0
	body := enc[start:]
	for i, at := range w.regions {
		rec := w.saved[i]
		if rec == nil {
			continue // null: the first encoding already says so
		}
		p := len(w.prefix)
		if flexible {
			w.prefix = binary.AppendUvarint(w.prefix, uint64(len(rec))+1)
		} else {
			w.prefix = binary.BigEndian.AppendUint32(w.prefix, uint32(len(rec)))
		}
		if from == 0 {
			w.iov = append(w.iov, enc[:start+at])
		} else {
			w.iov = append(w.iov, body[from:at])
		}
		w.iov = append(w.iov, w.prefix[p:], rec)
		total += len(w.prefix) - p - width + len(rec)
		from = at + width
	}
	if from == 0 {
		w.iov = append(w.iov, enc)
	} else {
		w.iov = append(w.iov, body[from:])
	}
	binary.BigEndian.PutUint32(enc, uint32(total))
	return w.iov, total + 4, enc, true
}

// findPrefixes records in w.regions where null and empty differ: one
// length prefix per records field, each exactly the null encoding in null
// and the empty one in empty. Anything else (it cannot happen with kmsg's
// encoders, but a future field could make it) reports false.
func (w *recordsWriter) findPrefixes(null, empty []byte, width int) bool {
	w.regions = w.regions[:0]
	if len(null) != len(empty) {
		return false
	}
	for i := 0; i < len(null); i++ {
		if null[i] == empty[i] {
			continue
		}
		if i+width > len(null) || len(w.regions) == len(w.fields) {
			return false
		}
		if width == 4 {
			if binary.BigEndian.Uint32(null[i:]) != 0xffffffff || binary.BigEndian.Uint32(empty[i:]) != 0 {
				return false
			}
		} else if null[i] != 0 || empty[i] != 1 {
			return false
		}
		w.regions = append(w.regions, i)
		i += width - 1
	}
	return len(w.regions) == len(w.fields)
}
