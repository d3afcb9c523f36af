package share

// keyWindow holds the record key of each offset of the window while
// key-ordered delivery is on.
type keyWindow struct {
	base int64
	vals []uint64
}

func (w *keyWindow) reset() { w.base, w.vals = 0, w.vals[:0] }

func (p *SharePartition) keyedFetchOffset(now, off int64) int64 { return off }
