package log

import (
	"hash/maphash"
	"math/bits"
)

// offsetMap is the cleaner's key -> latest offset map (Kafka's
// SkimpyOffsetMap): a fixed-size open-addressing table of 128-bit key
// hashes, so its memory is bounded by log.cleaner.dedupe.buffer.size
// whatever the keys' sizes. Two keys with the same 128-bit hash would be
// taken for one (Kafka accepts the same with MD5); with random seeds per
// map the chance is negligible.
type offsetMap struct {
	seed1, seed2 maphash.Seed
	slots        []mapSlot
	entries      int
	maxSlots     int // the dedupe buffer's share / mapSlotBytes
	maxEntries   int // maxSlots * load factor
	latest       int64
}

// mapSlot is one entry: off is the offset + 1, 0 for an empty slot.
type mapSlot struct {
	h1, h2 uint64
	off    int64
}

// mapSlotBytes is what one slot costs (the dedupe buffer divides by it).
const mapSlotBytes = 24

// newOffsetMap returns a map for at most want entries (the records of the
// dirty section), never with more slots than bufBytes holds. It starts
// small and doubles while it is half full: keys repeat (that is why the
// log is compacted), and a table sized to the distinct keys stays in the
// CPU caches, where one sized to the records would miss on every probe.
func newOffsetMap(bufBytes int64, loadFactor float64, want int64) *offsetMap {
	if loadFactor <= 0 || loadFactor > 1 {
		loadFactor = 0.9
	}
	maxSlots := int(max(bufBytes/mapSlotBytes, 16))
	limit := min(int(float64(want)/loadFactor)+1, maxSlots)
	n := min(max(limit, 16), 1<<12, maxSlots)
	return &offsetMap{
		seed1:      maphash.MakeSeed(),
		seed2:      maphash.MakeSeed(),
		slots:      make([]mapSlot, n),
		maxSlots:   max(limit, n),
		maxEntries: max(int(float64(maxSlots)*loadFactor), 1),
		latest:     -1,
	}
}

// grow doubles the table (up to maxSlots) and re-inserts the entries.
func (m *offsetMap) grow() {
	old := m.slots
	m.slots = make([]mapSlot, min(2*len(old), m.maxSlots))
	for i := range old {
		if s := &old[i]; s.off != 0 {
			m.slots[m.slot(s.h1, s.h2)] = *s
		}
	}
}

// full reports whether no more keys may be added.
func (m *offsetMap) full() bool { return m.entries >= m.maxEntries }

func (m *offsetMap) hash(key []byte) (uint64, uint64) {
	return maphash.Bytes(m.seed1, key), maphash.Bytes(m.seed2, key)
}

// slot returns the index of key's slot or of the empty slot where it goes.
func (m *offsetMap) slot(h1, h2 uint64) int {
	n := uint64(len(m.slots))
	i, _ := bits.Mul64(h1, n)
	for {
		s := &m.slots[i]
		if s.off == 0 || (s.h1 == h1 && s.h2 == h2) {
			return int(i)
		}
		i++
		if i == n {
			i = 0
		}
	}
}

// put records offset as the latest of key. It returns false if the map is
// full and key is new.
func (m *offsetMap) put(key []byte, offset int64) bool {
	h1, h2 := m.hash(key)
	s := &m.slots[m.slot(h1, h2)]
	if s.off == 0 {
		if m.full() {
			return false
		}
		if 2*(m.entries+1) > len(m.slots) && len(m.slots) < m.maxSlots {
			m.grow()
			s = &m.slots[m.slot(h1, h2)]
		}
		if m.entries+1 >= len(m.slots) {
			return false // (maxSlots from want: cannot happen)
		}
		s.h1, s.h2 = h1, h2
		m.entries++
	}
	s.off = offset + 1
	m.latest = max(m.latest, offset)
	return true
}

// get returns the latest offset of key, -1 if the map does not have it.
func (m *offsetMap) get(key []byte) int64 {
	h1, h2 := m.hash(key)
	return m.slots[m.slot(h1, h2)].off - 1
}
