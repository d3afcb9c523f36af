package share

import "testing"

// A leader change loses the acquisitions in flight, as a Kafka
// share-partition leader change does: another member gets the records at
// once, and the old holder's acknowledgement is refused. Another
// partition's leader change touches nothing.
func TestManagerLeaderChanged(t *testing.T) {
	m, lg, _ := newTestManager(t)
	lg.append(10)
	var a, b Scratch
	if r := fetchOnce(t, m, &a, "a", 0); len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 9, 1}) {
		t.Fatalf("first acquisition: %+v", r)
	}
	if n, err := m.LeaderChanged([16]byte{1}, 1); n != 0 || err != nil {
		t.Fatalf("another partition's move released %d (%v)", n, err)
	}
	if n, err := m.LeaderChanged([16]byte{1}, 0); n != 10 || err != nil {
		t.Fatalf("leader change released %d (%v), want 10", n, err)
	}
	if r := fetchOnce(t, m, &b, "b", 0); len(r.Acquired) != 1 || r.Acquired[0] != (AcquiredRecords{0, 9, 2}) {
		t.Fatalf("after the move b got %+v, want 0-9 delivery 2", r.Acquired)
	}
	if r := fetchOnce(t, m, &a, "a", 1, AckBatch{0, 9, []AckType{AckAccept}}); r.AckCode != codeInvalidRecordState {
		t.Fatalf("a's ack from before the move: code %d", r.AckCode)
	}
}
