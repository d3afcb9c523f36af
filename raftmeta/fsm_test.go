package raftmeta

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

type fsmHarness struct {
	t     *testing.T
	f     *fsm
	index uint64
}

func newFSMHarness(t *testing.T) *fsmHarness {
	return &fsmHarness{t: t, f: newFSM(discardLogger())}
}

func (h *fsmHarness) applyRaw(data []byte) any {
	h.index++
	return h.f.Apply(&raft.Log{Index: h.index, Term: 1, Type: raft.LogCommand, Data: data})
}

func (h *fsmHarness) apply(c command) any { return h.applyRaw(encodeCommand(c)) }

func (h *fsmHarness) mustApply(c command) any {
	h.t.Helper()
	resp := h.apply(c)
	if err, ok := resp.(error); ok {
		h.t.Fatalf("apply %T: %v", c, err)
	}
	return resp
}

var (
	idA = UUID{1, 2, 3}
	idB = UUID{4, 5, 6}
)

func assign(parts int, replicas ...int32) [][]int32 {
	a := make([][]int32, parts)
	for p := range a {
		a[p] = rotate(replicas, p)
	}
	return a
}

func TestFSMBootstrap(t *testing.T) {
	h := newFSMHarness(t)
	h.mustApply(&bootstrapCmd{ClusterID: "c1", Features: defaultFeatures})
	img := h.f.image()
	if img.ClusterID != "c1" || !reflect.DeepEqual(img.Features, defaultFeatures) {
		t.Fatalf("after bootstrap: id %q features %v", img.ClusterID, img.Features)
	}
	if resp := h.apply(&bootstrapCmd{ClusterID: "c2"}); !errors.Is(resp.(error), errAlreadyBootstrapped) {
		t.Fatalf("second bootstrap = %v", resp)
	}
	if h.f.image().ClusterID != "c1" {
		t.Fatal("second bootstrap changed the cluster id")
	}
	if resp := newFSMHarness(t).apply(&bootstrapCmd{}); !errors.Is(resp.(error), ErrInvalidRequest) {
		t.Fatalf("bootstrap without id = %v", resp)
	}
}

func TestFSMCommands(t *testing.T) {
	type check func(t *testing.T, img *Image, resp any)
	tests := []struct {
		name    string
		setup   []command
		cmd     command
		wantErr error
		check   check
	}{
		{
			name: "register broker",
			cmd:  &registerBrokerCmd{Broker{NodeID: 1, Host: "h", Port: 9092, Rack: "r1"}},
			check: func(t *testing.T, img *Image, _ any) {
				if got := img.Brokers[1]; got != (Broker{NodeID: 1, Host: "h", Port: 9092, Rack: "r1"}) {
					t.Fatalf("broker = %+v", got)
				}
			},
		},
		{
			name:    "register broker bad port",
			cmd:     &registerBrokerCmd{Broker{NodeID: 1, Host: "h", Port: 70000}},
			wantErr: ErrInvalidRequest,
		},
		{
			name: "create topic",
			cmd:  &createTopicCmd{Name: "t", ID: idA, Assignment: assign(3, 1, 2), Configs: map[string]string{"cleanup.policy": "compact"}},
			check: func(t *testing.T, img *Image, resp any) {
				tp := img.Topics["t"]
				if tp == nil || img.TopicsByID[idA] != tp || resp.(*Topic) != tp {
					t.Fatalf("topic not indexed by name and id: %+v", tp)
				}
				want := []Partition{
					{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
					{Leader: 2, Replicas: []int32{2, 1}, ISR: []int32{2, 1}},
					{Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}},
				}
				if !reflect.DeepEqual(tp.Partitions, want) || tp.Configs["cleanup.policy"] != "compact" {
					t.Fatalf("topic = %+v", tp)
				}
			},
		},
		{
			name:    "create existing topic",
			setup:   []command{&createTopicCmd{Name: "t", ID: idA, Assignment: assign(1, 1)}},
			cmd:     &createTopicCmd{Name: "t", ID: idB, Assignment: assign(1, 1)},
			wantErr: ErrTopicExists,
		},
		{
			name:    "create topic id collision",
			setup:   []command{&createTopicCmd{Name: "t", ID: idA, Assignment: assign(1, 1)}},
			cmd:     &createTopicCmd{Name: "u", ID: idA, Assignment: assign(1, 1)},
			wantErr: errTopicIDTaken,
		},
		{name: "create topic zero partitions", cmd: &createTopicCmd{Name: "t", ID: idA}, wantErr: ErrInvalidPartitions},
		{name: "create topic zero id", cmd: &createTopicCmd{Name: "t", Assignment: assign(1, 1)}, wantErr: ErrInvalidRequest},
		{name: "create topic bad name", cmd: &createTopicCmd{Name: "a/b", ID: idA, Assignment: assign(1, 1)}, wantErr: ErrInvalidTopic},
		{name: "create topic no replicas", cmd: &createTopicCmd{Name: "t", ID: idA, Assignment: [][]int32{{}}}, wantErr: ErrInvalidReplicationFactor},
		{name: "create topic duplicate replica", cmd: &createTopicCmd{Name: "t", ID: idA, Assignment: [][]int32{{1, 1}}}, wantErr: ErrInvalidReplicaAssignment},
		{
			name:  "delete topic",
			setup: []command{&createTopicCmd{Name: "t", ID: idA, Assignment: assign(1, 1)}},
			cmd:   &deleteTopicCmd{Name: "t", ID: idA},
			check: func(t *testing.T, img *Image, resp any) {
				if len(img.Topics) != 0 || len(img.TopicsByID) != 0 || resp.(UUID) != idA {
					t.Fatalf("after delete: %v %v resp %v", img.Topics, img.TopicsByID, resp)
				}
			},
		},
		{name: "delete unknown topic", cmd: &deleteTopicCmd{Name: "t", ID: idA}, wantErr: ErrUnknownTopic},
		{
			name:    "delete recreated topic by old id",
			setup:   []command{&createTopicCmd{Name: "t", ID: idB, Assignment: assign(1, 1)}},
			cmd:     &deleteTopicCmd{Name: "t", ID: idA},
			wantErr: ErrUnknownTopic,
		},
		{
			name:  "create partitions",
			setup: []command{&createTopicCmd{Name: "t", ID: idA, Assignment: assign(1, 1, 2)}},
			cmd:   &createPartitionsCmd{Name: "t", ID: idA, From: 1, Assignment: [][]int32{{2, 1}, {1, 2}}},
			check: func(t *testing.T, img *Image, _ any) {
				tp := img.Topics["t"]
				if len(tp.Partitions) != 3 || tp.Partitions[1].Leader != 2 || img.TopicsByID[idA] != tp {
					t.Fatalf("after create partitions: %+v", tp)
				}
			},
		},
		{
			name:    "create partitions shrink",
			setup:   []command{&createTopicCmd{Name: "t", ID: idA, Assignment: assign(3, 1)}},
			cmd:     &createPartitionsCmd{Name: "t", ID: idA, From: 1, Assignment: [][]int32{{1}}},
			wantErr: ErrInvalidPartitions,
		},
		{
			name:    "create partitions same count",
			setup:   []command{&createTopicCmd{Name: "t", ID: idA, Assignment: assign(2, 1)}},
			cmd:     &createPartitionsCmd{Name: "t", ID: idA, From: 2},
			wantErr: ErrInvalidPartitions,
		},
		{
			name:    "create partitions stale",
			setup:   []command{&createTopicCmd{Name: "t", ID: idA, Assignment: assign(2, 1)}},
			cmd:     &createPartitionsCmd{Name: "t", ID: idA, From: 1, Assignment: [][]int32{{1}, {1}, {1}}},
			wantErr: errStaleProposal,
		},
		{name: "create partitions unknown", cmd: &createPartitionsCmd{Name: "t", ID: idA, From: 0, Assignment: [][]int32{{1}}}, wantErr: ErrUnknownTopic},
		{
			name:  "alter topic configs",
			setup: []command{&createTopicCmd{Name: "t", ID: idA, Assignment: assign(1, 1), Configs: map[string]string{"a": "1", "b": "2"}}},
			cmd:   &alterConfigsCmd{Resource: resourceTopic, Entity: "t", Set: map[string]string{"c": "3", "a": "9"}, Delete: []string{"b", "zz"}},
			check: func(t *testing.T, img *Image, _ any) {
				want := map[string]string{"a": "9", "c": "3"}
				if got := img.Topics["t"].Configs; !reflect.DeepEqual(got, want) || img.TopicsByID[idA].Configs["c"] != "3" {
					t.Fatalf("topic configs = %v, want %v", got, want)
				}
			},
		},
		{name: "alter unknown topic configs", cmd: &alterConfigsCmd{Resource: resourceTopic, Entity: "t", Set: map[string]string{"a": "1"}}, wantErr: ErrUnknownTopic},
		{name: "alter configs empty key", cmd: &alterConfigsCmd{Resource: resourceBroker, Set: map[string]string{"": "1"}}, wantErr: ErrInvalidRequest},
		{
			name:  "alter broker configs",
			setup: []command{&alterConfigsCmd{Resource: resourceBroker, Entity: "1", Set: map[string]string{"x": "1"}}},
			cmd:   &alterConfigsCmd{Resource: resourceBroker, Entity: "", Set: map[string]string{"log.retention.ms": "5"}},
			check: func(t *testing.T, img *Image, _ any) {
				want := map[string]map[string]string{"": {"log.retention.ms": "5"}, "1": {"x": "1"}}
				if !reflect.DeepEqual(img.BrokerConfigs, want) {
					t.Fatalf("broker configs = %v", img.BrokerConfigs)
				}
			},
		},
		{
			name:  "delete last broker config drops the entity",
			setup: []command{&alterConfigsCmd{Resource: resourceBroker, Entity: "1", Set: map[string]string{"x": "1"}}},
			cmd:   &alterConfigsCmd{Resource: resourceBroker, Entity: "1", Delete: []string{"x"}},
			check: func(t *testing.T, img *Image, _ any) {
				if _, ok := img.BrokerConfigs["1"]; ok {
					t.Fatalf("empty entity kept: %v", img.BrokerConfigs)
				}
			},
		},
		{
			name: "alter group configs",
			cmd:  &alterConfigsCmd{Resource: resourceGroup, Entity: "g", Set: map[string]string{"share.auto.offset.reset": "earliest"}},
			check: func(t *testing.T, img *Image, _ any) {
				if img.GroupConfigs["g"]["share.auto.offset.reset"] != "earliest" {
					t.Fatalf("group configs = %v", img.GroupConfigs)
				}
			},
		},
		{name: "alter unnamed group", cmd: &alterConfigsCmd{Resource: resourceGroup, Set: map[string]string{"a": "b"}}, wantErr: ErrInvalidRequest},
		{
			name:  "set and clear feature",
			setup: []command{&setFeatureCmd{Name: "share.version", Level: 2}},
			cmd:   &setFeatureCmd{Name: "group.version", Level: 0},
			check: func(t *testing.T, img *Image, _ any) {
				if img.Features["share.version"] != 2 {
					t.Fatalf("features = %v", img.Features)
				}
				if _, ok := img.Features["group.version"]; ok {
					t.Fatal("level 0 feature listed")
				}
			},
		},
		{name: "negative feature level", cmd: &setFeatureCmd{Name: "x", Level: -1}, wantErr: ErrInvalidRequest},
		{
			name:  "allocate producer ids",
			setup: []command{&allocateProducerIDsCmd{Count: 1000}},
			cmd:   &allocateProducerIDsCmd{Count: 5},
			check: func(t *testing.T, img *Image, resp any) {
				if resp.(int64) != 1000 || img.NextProducerID != 1005 {
					t.Fatalf("first = %v next = %d", resp, img.NextProducerID)
				}
			},
		},
		{name: "allocate zero producer ids", cmd: &allocateProducerIDsCmd{Count: 0}, wantErr: ErrInvalidRequest},
		{
			name:    "allocate producer ids overflow",
			setup:   []command{&allocateProducerIDsCmd{Count: 1 << 62}},
			cmd:     &allocateProducerIDsCmd{Count: 1 << 62},
			wantErr: ErrInvalidRequest,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newFSMHarness(t)
			for _, c := range tc.setup {
				h.mustApply(c)
			}
			before := h.f.image()
			beforeBytes := encodeImage(before)
			resp := h.apply(tc.cmd)
			after := h.f.image()
			if after.AppliedIndex != h.index {
				t.Fatalf("AppliedIndex = %d, want %d", after.AppliedIndex, h.index)
			}
			// Copy-on-write: the previous image never changes.
			if !bytes.Equal(encodeImage(before), beforeBytes) {
				t.Fatal("apply modified the previous image")
			}
			err, _ := resp.(error)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("resp = %v, want %v", resp, tc.wantErr)
				}
				// A rejected command changes nothing but the index.
				b := *before
				b.AppliedIndex = after.AppliedIndex
				if !bytes.Equal(encodeImage(&b), encodeImage(after)) {
					t.Fatal("rejected command changed the image")
				}
				return
			}
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			tc.check(t, after, resp)
			// Snapshot round trip of every resulting image.
			roundTripImage(t, h.f)
		})
	}
}

func TestFSMUnknownCommand(t *testing.T) {
	h := newFSMHarness(t)
	// Ignorable: skipped, answered with an error, the index still moves.
	resp := h.applyRaw([]byte{byte(ignorableFlag | 0x7e), 1, 9, 9})
	if err, _ := resp.(error); !errors.Is(err, errUnknownCommand) {
		t.Fatalf("ignorable unknown = %v", resp)
	}
	if h.f.image().AppliedIndex != 1 {
		t.Fatal("skipped command did not advance the index")
	}
	// Known type, unknown payload version: as unknown as a new type.
	for _, data := range [][]byte{{0x7e, 1}, {byte(cmdCreateTopic), 99, 0}} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), "unknown metadata command") {
					t.Fatalf("apply of %x: recover() = %v, want a divergence panic", data, r)
				}
			}()
			h.applyRaw(data)
		}()
	}
	// Malformed bytes of a known command: an error, no panic, no change.
	resp = h.applyRaw([]byte{byte(cmdCreateTopic), 1, 0xff})
	if err, _ := resp.(error); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("malformed = %v", resp)
	}
	// Non-command entries do not reach the codec but move the index.
	h.index++
	h.f.Apply(&raft.Log{Index: h.index, Type: raft.LogConfiguration})
	if h.f.image().AppliedIndex != h.index {
		t.Fatal("configuration entry did not advance the index")
	}
}

func TestFSMApplyBatch(t *testing.T) {
	f := newFSM(discardLogger())
	logs := []*raft.Log{
		{Index: 1, Type: raft.LogCommand, Data: encodeCommand(&createTopicCmd{Name: "a", ID: idA, Assignment: assign(1, 1)})},
		{Index: 2, Type: raft.LogCommand, Data: encodeCommand(&createTopicCmd{Name: "a", ID: idB, Assignment: assign(1, 1)})},
		{Index: 3, Type: raft.LogCommand, Data: encodeCommand(&createTopicCmd{Name: "b", ID: idB, Assignment: assign(1, 1)})},
		{Index: 4, Type: raft.LogCommand, Data: encodeCommand(&deleteTopicCmd{Name: "a", ID: idA})},
	}
	resp := f.ApplyBatch(logs)
	if len(resp) != 4 {
		t.Fatalf("%d responses", len(resp))
	}
	if _, ok := resp[0].(*Topic); !ok {
		t.Fatalf("resp[0] = %v", resp[0])
	}
	if err, _ := resp[1].(error); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("resp[1] = %v", resp[1])
	}
	if resp[3].(UUID) != idA {
		t.Fatalf("resp[3] = %v", resp[3])
	}
	img := f.image()
	if len(img.Topics) != 1 || img.Topics["b"] == nil || len(img.TopicsByID) != 1 || img.AppliedIndex != 4 {
		t.Fatalf("image after batch: %+v", img)
	}
}

type memSink struct {
	bytes.Buffer
	canceled, closed bool
	failWrite        bool
}

func (s *memSink) Write(p []byte) (int, error) {
	if s.failWrite {
		return 0, errors.New("disk full")
	}
	return s.Buffer.Write(p)
}
func (s *memSink) Close() error  { s.closed = true; return nil }
func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.canceled = true; return nil }

func roundTripImage(t *testing.T, f *fsm) {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var sink memSink
	if err := snap.Persist(&sink); err != nil || !sink.closed {
		t.Fatalf("persist: %v closed=%v", err, sink.closed)
	}
	g := newFSM(discardLogger())
	if err := g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatalf("restore: %v", err)
	}
	// The encoding is canonical (sorted), so equal bytes mean equal images.
	want, got := f.image(), g.image()
	if !bytes.Equal(encodeImage(want), encodeImage(got)) {
		t.Fatalf("restored image differs:\n got %+v\nwant %+v", got, want)
	}
	for name, tp := range got.Topics {
		if got.TopicsByID[tp.ID] != tp {
			t.Fatalf("restored topic %s not shared between indexes", name)
		}
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	h := newFSMHarness(t)
	h.mustApply(&bootstrapCmd{ClusterID: "cid", Features: defaultFeatures})
	h.mustApply(&registerBrokerCmd{Broker{NodeID: 1, Host: "a", Port: 1}})
	h.mustApply(&registerBrokerCmd{Broker{NodeID: 2, Host: "b", Port: 2, Rack: "x"}})
	h.mustApply(&createTopicCmd{Name: "t1", ID: idA, Assignment: assign(4, 1, 2), Configs: map[string]string{"k": "v"}})
	h.mustApply(&createTopicCmd{Name: "t2", ID: idB, Assignment: assign(1, 2)})
	h.mustApply(&alterConfigsCmd{Resource: resourceBroker, Entity: "", Set: map[string]string{"a": "b"}})
	h.mustApply(&alterConfigsCmd{Resource: resourceGroup, Entity: "g", Set: map[string]string{"c": "d"}})
	h.mustApply(&allocateProducerIDsCmd{Count: 77})
	roundTripImage(t, h.f)

	// Field-by-field equality of the topics as well.
	snap, _ := h.f.Snapshot()
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	img, err := decodeImage(sink.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	orig := h.f.image()
	if len(img.Topics) != 2 || !reflect.DeepEqual(*img.Topics["t1"], *orig.Topics["t1"]) || !reflect.DeepEqual(*img.Topics["t2"], *orig.Topics["t2"]) {
		t.Fatalf("topics differ: %+v vs %+v", img.Topics, orig.Topics)
	}
	if !bytes.Equal(encodeImage(img), sink.Bytes()) {
		t.Fatal("re-encoding a decoded snapshot changed its bytes")
	}

	// A failing sink is cancelled.
	bad := &memSink{failWrite: true}
	if err := snap.Persist(bad); err == nil || !bad.canceled {
		t.Fatalf("persist to failing sink: err %v canceled %v", err, bad.canceled)
	}

	// Damage anywhere is detected.
	data := sink.Bytes()
	for _, i := range []int{0, 4, 10, len(data) / 2, len(data) - 1} {
		c := append([]byte(nil), data...)
		c[i] ^= 0x40
		if _, err := decodeImage(c); !errors.Is(err, ErrCorrupt) {
			t.Errorf("flipped byte %d: %v", i, err)
		}
	}
	if _, err := decodeImage(data[:len(data)-3]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
	if err := newFSM(discardLogger()).Restore(io.NopCloser(bytes.NewReader(data[:9]))); !errors.Is(err, ErrCorrupt) {
		t.Errorf("restore truncated: %v", err)
	}
}
