package log

import (
	"bytes"
	"fmt"
	"strconv"
)

// epochEntry says that leader epoch `epoch` started at offset `start`.
type epochEntry struct {
	epoch int32
	start int64
}

// epochCache is Kafka's LeaderEpochFileCache: the start offset of every
// leader epoch, ascending in both fields. Guarded by Log.mu (writes also hold
// Log.appendMu).
type epochCache []epochEntry

func (c epochCache) latest() int32 {
	if len(c) == 0 {
		return -1
	}
	return c[len(c)-1].epoch
}

// assign records that epoch starts at offset; it reports whether it changed.
func (c *epochCache) assign(epoch int32, offset int64) bool {
	if epoch < 0 || epoch <= c.latest() {
		return false
	}
	// An entry that starts at or after offset is stale (its data was truncated).
	for len(*c) > 0 && (*c)[len(*c)-1].start >= offset {
		*c = (*c)[:len(*c)-1]
	}
	*c = append(*c, epochEntry{epoch, offset})
	return true
}

// truncateFromEnd drops epochs that start at or after endOffset.
func (c *epochCache) truncateFromEnd(endOffset int64) bool {
	n := len(*c)
	for n > 0 && (*c)[n-1].start >= endOffset {
		n--
	}
	changed := n != len(*c)
	*c = (*c)[:n]
	return changed
}

// truncateFromStart drops epochs wholly below startOffset; the last of them
// is kept, moved up to startOffset, as Kafka does.
func (c *epochCache) truncateFromStart(startOffset int64) bool {
	i := 0
	for i < len(*c) && (*c)[i].start <= startOffset {
		i++
	}
	if i == 0 {
		return false
	}
	keep := (*c)[i-1]
	if i == 1 && keep.start == startOffset {
		return false
	}
	keep.start = startOffset
	rest := append(epochCache{keep}, (*c)[i:]...)
	*c = rest
	return true
}

// endOffsetFor implements OffsetForLeaderEpoch (LeaderEpochFileCache.endOffsetFor).
func (c epochCache) endOffsetFor(requested int32, logEnd int64) (int32, int64) {
	if requested < 0 || len(c) == 0 {
		return -1, -1
	}
	if requested == c.latest() {
		return requested, logEnd
	}
	hi := -1
	for i, e := range c {
		if e.epoch > requested {
			hi = i
			break
		}
	}
	if hi < 0 {
		return -1, -1
	}
	if hi == 0 {
		return requested, c[0].start
	}
	return c[hi-1].epoch, c[hi].start
}

// Kafka's checkpoint file text format: version line, count line, then one
// "epoch startOffset" line per entry.
func (c epochCache) encode() []byte {
	var b []byte
	b = append(b, "0\n"...)
	b = strconv.AppendInt(b, int64(len(c)), 10)
	b = append(b, '\n')
	for _, e := range c {
		b = strconv.AppendInt(b, int64(e.epoch), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, e.start, 10)
		b = append(b, '\n')
	}
	return b
}

func decodeEpochCheckpoint(data []byte) (epochCache, error) {
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte{'\n'})
	if len(lines) < 2 {
		return nil, fmt.Errorf("leader-epoch-checkpoint: %d lines, want at least 2", len(lines))
	}
	if string(lines[0]) != "0" {
		return nil, fmt.Errorf("leader-epoch-checkpoint: unknown version %q", lines[0])
	}
	n, err := strconv.Atoi(string(lines[1]))
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("leader-epoch-checkpoint: count %q does not match %d entries", lines[1], len(lines)-2)
	}
	c := make(epochCache, 0, n)
	for i, l := range lines[2:] {
		f := bytes.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("leader-epoch-checkpoint: line %d: %q", i+3, l)
		}
		ep, err1 := strconv.ParseInt(string(f[0]), 10, 32)
		off, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		if err1 != nil || err2 != nil || ep < 0 || off < 0 {
			return nil, fmt.Errorf("leader-epoch-checkpoint: line %d: %q", i+3, l)
		}
		if len(c) > 0 && (int32(ep) <= c[len(c)-1].epoch || off < c[len(c)-1].start) {
			return nil, fmt.Errorf("leader-epoch-checkpoint: line %d: not ascending", i+3)
		}
		c = append(c, epochEntry{int32(ep), off})
	}
	return c, nil
}
