package raftmeta

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestOpenBootstrapsSingleNode(t *testing.T) {
	start := time.Now()
	s := newStore(t, Config{NodeID: 7})
	elapsed := time.Since(start)
	t.Logf("Open on an empty dir took %v", elapsed)
	// The broker must be ready within 100 ms; a broken fast election would
	// fall back to raft's 500 ms+ heartbeat timeout and trip this.
	if elapsed > 400*time.Millisecond {
		t.Errorf("Open took %v", elapsed)
	}
	img := s.Image()
	if len(img.ClusterID) != 22 {
		t.Errorf("cluster id %q is not Kafka's 22-character form", img.ClusterID)
	}
	if img.ControllerID != 7 {
		t.Errorf("ControllerID = %d, want 7", img.ControllerID)
	}
	for name, lvl := range DefaultFeatures() {
		if img.Features[name] != lvl {
			t.Errorf("feature %s = %d, want %d", name, img.Features[name], lvl)
		}
	}
	if img.AppliedIndex == 0 {
		t.Error("AppliedIndex is 0 after bootstrap")
	}
}

func TestOpenClusterID(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Dir: dir, NodeID: 1, ClusterID: "my-cluster"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Image().ClusterID; got != "my-cluster" {
		t.Fatalf("ClusterID = %q", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{Dir: dir, NodeID: 1, ClusterID: "other"}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("reopen with another cluster id: %v", err)
	}
	s = newStore(t, Config{Dir: dir, NodeID: 1})
	if got := s.Image().ClusterID; got != "my-cluster" {
		t.Fatalf("ClusterID after reopen = %q", got)
	}
}

func TestOpenInvalidConfig(t *testing.T) {
	tests := []Config{
		{},
		{Dir: t.TempDir(), NodeID: -1},
		{Dir: t.TempDir(), NodeID: 1, Voters: []Voter{{ID: 2, Addr: "127.0.0.1:1"}}, BindAddr: "127.0.0.1:0"},
		{Dir: t.TempDir(), NodeID: 1, Voters: []Voter{{ID: 1, Addr: "127.0.0.1:1"}}},
	}
	for i, cfg := range tests {
		if s, err := Open(cfg); !errors.Is(err, ErrInvalidRequest) {
			if s != nil {
				s.Close()
			}
			t.Errorf("case %d: Open(%+v) = %v, want ErrInvalidRequest", i, cfg, err)
		}
	}
}

func TestStoreOperations(t *testing.T) {
	s := newStore(t, Config{NodeID: 1})
	ctx := testCtx(t)

	if err := s.RegisterBroker(ctx, Broker{NodeID: 1, Host: "localhost", Port: 9092}); err != nil {
		t.Fatal(err)
	}
	if got := s.Image().Brokers[1]; got.Host != "localhost" || got.Port != 9092 {
		t.Fatalf("broker = %+v", got)
	}

	tp, err := s.CreateTopic(ctx, "orders", 3, []int32{1}, map[string]string{"retention.ms": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	if tp.ID == (UUID{}) || len(tp.Partitions) != 3 || tp.Partitions[2].Leader != 1 || tp.Partitions[0].LeaderEpoch != 0 {
		t.Fatalf("topic = %+v", tp)
	}
	// Visible in the very next image, by name and id.
	img := s.Image()
	if img.Topics["orders"] != tp || img.TopicsByID[tp.ID] != tp {
		t.Fatal("created topic not in the next image")
	}

	errTests := []struct {
		name string
		err  error
		want error
	}{
		{"create existing", second(s.CreateTopic(ctx, "orders", 1, []int32{1}, nil)), ErrTopicExists},
		{"create zero partitions", second(s.CreateTopic(ctx, "x", 0, []int32{1}, nil)), ErrInvalidPartitions},
		{"create no replicas", second(s.CreateTopic(ctx, "x", 1, nil, nil)), ErrInvalidReplicationFactor},
		{"create bad name", second(s.CreateTopic(ctx, "..", 1, []int32{1}, nil)), ErrInvalidTopic},
		{"delete unknown", second(s.DeleteTopic(ctx, "nope")), ErrUnknownTopic},
		{"shrink partitions", s.CreatePartitions(ctx, "orders", 2), ErrInvalidPartitions},
		{"same partitions", s.CreatePartitions(ctx, "orders", 3), ErrInvalidPartitions},
		{"partitions of unknown", s.CreatePartitions(ctx, "nope", 5), ErrUnknownTopic},
		{"configs of unknown topic", s.AlterTopicConfigs(ctx, "nope", map[string]string{"a": "b"}, nil), ErrUnknownTopic},
		{"bad broker entity", s.AlterBrokerConfigs(ctx, "01", map[string]string{"a": "b"}, nil), ErrInvalidRequest},
		{"negative feature", s.SetFeature(ctx, "share.version", -1), ErrInvalidRequest},
		{"zero producer ids", second(s.AllocateProducerIDs(ctx, 0)), ErrInvalidRequest},
	}
	for _, tc := range errTests {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, tc.err, tc.want)
		}
	}

	if err := s.CreatePartitions(ctx, "orders", 5); err != nil {
		t.Fatal(err)
	}
	if got := s.Image().Topics["orders"]; len(got.Partitions) != 5 || got.ID != tp.ID {
		t.Fatalf("after CreatePartitions: %+v", got)
	}
	if err := s.AlterTopicConfigs(ctx, "orders", map[string]string{"cleanup.policy": "compact"}, []string{"retention.ms"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Image().Topics["orders"].Configs; len(got) != 1 || got["cleanup.policy"] != "compact" {
		t.Fatalf("topic configs = %v", got)
	}
	if err := s.AlterBrokerConfigs(ctx, "", map[string]string{"log.retention.ms": "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterBrokerConfigs(ctx, "1", map[string]string{"log.flush.interval.ms": "2"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterGroupConfigs(ctx, "g", map[string]string{"share.auto.offset.reset": "earliest"}, nil); err != nil {
		t.Fatal(err)
	}
	img = s.Image()
	if img.BrokerConfigs[""]["log.retention.ms"] != "1" || img.BrokerConfigs["1"]["log.flush.interval.ms"] != "2" ||
		img.GroupConfigs["g"]["share.auto.offset.reset"] != "earliest" {
		t.Fatalf("configs: broker %v group %v", img.BrokerConfigs, img.GroupConfigs)
	}
	if err := s.SetFeature(ctx, "share.version", 2); err != nil {
		t.Fatal(err)
	}
	if s.Image().Features["share.version"] != 2 {
		t.Fatal("feature not set")
	}

	first, err := s.AllocateProducerIDs(ctx, 1000)
	if err != nil || first != 0 {
		t.Fatalf("first block = %d, %v", first, err)
	}
	next, err := s.AllocateProducerIDs(ctx, 10)
	if err != nil || next != 1000 {
		t.Fatalf("second block = %d, %v", next, err)
	}

	id, err := s.DeleteTopic(ctx, "orders")
	if err != nil || id != tp.ID {
		t.Fatalf("DeleteTopic = %v, %v", id, err)
	}
	if _, ok := s.Image().Topics["orders"]; ok {
		t.Fatal("deleted topic still in the image")
	}
	// The old image a reader held is untouched.
	if img.Topics["orders"] == nil {
		t.Fatal("an earlier image lost the topic")
	}
}

func second[T any](_ T, err error) error { return err }

func populate(t *testing.T, s *Store) {
	t.Helper()
	ctx := testCtx(t)
	for i := 0; i < 20; i++ {
		if _, err := s.CreateTopic(ctx, fmt.Sprintf("topic-%d", i), int32(i%4+1), []int32{1}, map[string]string{"i": strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DeleteTopic(ctx, "topic-3"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePartitions(ctx, "topic-5", 9); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterBroker(ctx, Broker{NodeID: 1, Host: "h", Port: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.AlterGroupConfigs(ctx, "g", map[string]string{"a": "b"}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRestart(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot=%v", snapshot), func(t *testing.T) {
			dir := t.TempDir()
			ctx := testCtx(t)
			s, err := Open(Config{Dir: dir, NodeID: 1})
			if err != nil {
				t.Fatal(err)
			}
			populate(t, s)
			first, err := s.AllocateProducerIDs(ctx, 5000)
			if err != nil {
				t.Fatal(err)
			}
			if snapshot {
				if err := s.raft.Snapshot().Error(); err != nil {
					t.Fatalf("snapshot: %v", err)
				}
				// Entries after the snapshot come from the log.
				if _, err := s.CreateTopic(ctx, "after-snapshot", 1, []int32{1}, nil); err != nil {
					t.Fatal(err)
				}
			}
			before := s.Image()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			s = newStore(t, Config{Dir: dir, NodeID: 1})
			after := s.Image()
			if !bytes.Equal(encodeImage(before), encodeImage(after)) {
				t.Fatalf("image changed across restart:\nbefore %+v\nafter  %+v", before, after)
			}
			for name, tp := range before.Topics {
				if after.Topics[name].ID != tp.ID || after.TopicsByID[tp.ID].Name != name {
					t.Fatalf("topic %s id changed", name)
				}
			}
			next, err := s.AllocateProducerIDs(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if next < first+5000 {
				t.Fatalf("producer id %d reused (block was [%d, %d))", next, first, first+5000)
			}
		})
	}
}

func TestConcurrentImageReaders(t *testing.T) {
	s := newStore(t, Config{NodeID: 1})
	ctx := testCtx(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				img := s.Image()
				if img.AppliedIndex < last {
					t.Errorf("AppliedIndex went back from %d to %d", last, img.AppliedIndex)
					return
				}
				last = img.AppliedIndex
				for name, tp := range img.Topics {
					if img.TopicsByID[tp.ID] != tp || tp.Name != name {
						t.Errorf("inconsistent image for %s", name)
						return
					}
					for _, p := range tp.Partitions {
						_ = p.Leader + int32(len(p.Replicas))
					}
					_ = len(tp.Configs)
				}
			}
		}()
	}
	for i := 0; i < 30; i++ {
		name := fmt.Sprintf("t%d", i)
		if _, err := s.CreateTopic(ctx, name, 2, []int32{1}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.AlterTopicConfigs(ctx, name, map[string]string{"k": "v"}, nil); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := s.CreatePartitions(ctx, name, 4); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
}

func TestConcurrentProposals(t *testing.T) {
	s := newStore(t, Config{NodeID: 1})
	ctx := testCtx(t)
	if _, err := s.CreateTopic(ctx, "grow", 1, []int32{1}, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ids := make(chan int64, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				first, err := s.AllocateProducerIDs(ctx, 10)
				if err != nil {
					t.Error(err)
					return
				}
				ids <- first
			}
			// Racing growth: stale proposals are retried, never lost.
			err := s.CreatePartitions(ctx, "grow", int32(len(s.Image().Topics["grow"].Partitions)+1))
			if err != nil && !errors.Is(err, ErrInvalidPartitions) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for first := range ids {
		if seen[first] {
			t.Fatalf("block %d handed out twice", first)
		}
		seen[first] = true
	}
	if len(seen) != 64 || s.Image().NextProducerID != 640 {
		t.Fatalf("%d blocks, next id %d", len(seen), s.Image().NextProducerID)
	}
}

func TestWaitApplied(t *testing.T) {
	s := newStore(t, Config{NodeID: 1})
	ctx := testCtx(t)
	idx := s.Image().AppliedIndex
	if err := s.WaitApplied(ctx, idx); err != nil {
		t.Fatalf("WaitApplied(current) = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.WaitApplied(ctx, idx+1) }()
	select {
	case err := <-done:
		t.Fatalf("WaitApplied returned before anything was applied: %v", err)
	default:
	}
	if err := s.SetFeature(ctx, "x.version", 1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("WaitApplied = %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.WaitApplied(cctx, idx+1000); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitApplied with cancelled ctx = %v", err)
	}

	go func() { done <- s.WaitApplied(ctx, idx+1000) }()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitApplied across Close = %v", err)
	}
}

func TestClosed(t *testing.T) {
	s := newStore(t, Config{NodeID: 1})
	ctx := testCtx(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if _, err := s.CreateTopic(ctx, "t", 1, []int32{1}, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("CreateTopic after Close = %v", err)
	}
	if s.Image() == nil {
		t.Fatal("Image after Close is nil")
	}
}

func TestErrorCode(t *testing.T) {
	tests := []struct {
		err  error
		want int16
	}{
		{nil, 0},
		{fmt.Errorf("x: %w", ErrUnknownTopic), 3},
		{ErrTopicExists, 36},
		{ErrInvalidPartitions, 37},
		{ErrInvalidReplicationFactor, 38},
		{ErrNotController, 41},
		{ErrClosed, 41},
		{ErrInvalidTopic, 17},
		{context.DeadlineExceeded, 7},
		{errors.New("boom"), -1},
	}
	for _, tc := range tests {
		if got := ErrorCode(tc.err); got != tc.want {
			t.Errorf("ErrorCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestRaftLogsGoToSlog checks the hclog adapter: raft's info lines arrive
// at debug level with their key/value pairs.
func TestRaftLogsGoToSlog(t *testing.T) {
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newStore(t, Config{NodeID: 1, Logger: logger})
	s.Close()
	out := buf.String()
	if !bytes.Contains([]byte(out), []byte(`level=DEBUG msg="entering leader state"`)) {
		t.Fatalf("raft's leader line missing or not at debug:\n%s", out)
	}
	if !bytes.Contains([]byte(out), []byte("component=raftmeta")) {
		t.Fatalf("component attribute missing:\n%s", out)
	}

	// A routine single-node start logs nothing above Info.
	buf.Reset()
	quiet := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		s := newStore(t, Config{Dir: dir, NodeID: 1, Logger: quiet})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := buf.String(); bytes.Contains([]byte(got), []byte("level=WARN")) || bytes.Contains([]byte(got), []byte("level=ERROR")) ||
		!bytes.Contains([]byte(got), []byte(`msg="metadata store open"`)) {
		t.Fatalf("start-up logs at Info:\n%s", got)
	}

	buf.Reset()
	h := newHCLog(quiet).Named("x").With("a", 1)
	h.Info("chatty")
	h.Warn("warned", "k", "v", "odd")
	if got := buf.String(); bytes.Contains([]byte(got), []byte("chatty")) ||
		!bytes.Contains([]byte(got), []byte(`level=WARN msg=warned raft_component=x a=1 k=v extra=odd`)) {
		t.Fatalf("adapter output:\n%s", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

// TestCluster runs three voters over TCP on loopback: one becomes leader and
// bootstraps, proposals on followers get ErrNotController, and followers'
// images catch up.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three raft nodes")
	}
	const n = 3
	var lns []net.Listener
	var voters []Voter
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		voters = append(voters, Voter{ID: int32(i + 1), Addr: ln.Addr().String()})
	}
	stores := make([]*Store, n)
	for i := 0; i < n; i++ {
		s, err := open(Config{Dir: t.TempDir(), NodeID: int32(i + 1), Voters: voters, ClusterID: "cluster-test"},
			openOptions{listener: lns[i]})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close node %d: %v", s.cfg.NodeID, err)
			}
		})
	}
	ctx := testCtx(t)

	// Wait (event-driven, bounded by ctx) for every node to see the same
	// controller and the bootstrap.
	for _, s := range stores {
		for {
			img := s.Image()
			if img.ControllerID > 0 && img.ClusterID == "cluster-test" {
				break
			}
			select {
			case <-s.fsm.appliedCh():
			case <-ctx.Done():
				t.Fatalf("node never saw a controller and the bootstrap: %+v", img)
			}
		}
	}
	ctrl := stores[0].Image().ControllerID
	leader := stores[ctrl-1]
	tp, err := leader.CreateTopic(ctx, "replicated", 3, []int32{1, 2, 3}, nil)
	if err != nil {
		t.Fatalf("CreateTopic on leader: %v", err)
	}
	idx := leader.Image().AppliedIndex
	for i, s := range stores {
		if int32(i+1) == ctrl {
			continue
		}
		if _, err := s.CreateTopic(ctx, "x", 1, []int32{1}, nil); !errors.Is(err, ErrNotController) {
			t.Errorf("CreateTopic on follower %d = %v, want ErrNotController", i+1, err)
		}
		if err := s.WaitApplied(ctx, idx); err != nil {
			t.Fatalf("follower %d WaitApplied: %v", i+1, err)
		}
		if got := s.Image().TopicsByID[tp.ID]; got == nil || got.Name != "replicated" || got.Partitions[1].Leader != 2 {
			t.Fatalf("follower %d image: %+v", i+1, got)
		}
	}
}

func TestOpenOtherNodesDir(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Config{Dir: dir, NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := Open(Config{Dir: dir, NodeID: 2}); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("Open of node 1's dir as node 2 = %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("refusing took %v", el)
	}
	// The failed Open released everything (pebble's lock included).
	s = newStore(t, Config{Dir: dir, NodeID: 1})
	if s.Image().ClusterID == "" {
		t.Fatal("reopen as the right node lost the metadata")
	}
}

// TestStoreCrashRecovery: every change a Store method acknowledged survives a
// power loss (pebble on a strict in-memory FS that drops unsynced writes).
func TestStoreCrashRecovery(t *testing.T) {
	fs := vfs.NewStrictMem()
	cfg := Config{Dir: t.TempDir(), NodeID: 1}
	s, err := open(cfg, openOptions{fs: fs})
	if err != nil {
		t.Fatal(err)
	}
	populate(t, s)
	first, err := s.AllocateProducerIDs(testCtx(t), 100)
	if err != nil {
		t.Fatal(err)
	}
	before := s.Image()

	fs.SetIgnoreSyncs(true)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fs.ResetToSyncedState()
	fs.SetIgnoreSyncs(false)

	s, err = open(cfg, openOptions{fs: fs})
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if !bytes.Equal(encodeImage(before), encodeImage(s.Image())) {
		t.Fatalf("image after crash differs:\nbefore %+v\nafter  %+v", before, s.Image())
	}
	next, err := s.AllocateProducerIDs(testCtx(t), 1)
	if err != nil || next < first+100 {
		t.Fatalf("producer id after crash = %d, %v (block [%d, %d))", next, err, first, first+100)
	}
}
