package raftmeta

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// fsm is the raft state machine: a thin wrapper that decodes commands and
// applies them to a copy-on-write image, published through an atomic
// pointer so readers never block.
//
// Writers are raft's FSM goroutine (Apply/ApplyBatch/Restore) and the leader
// observer (ControllerID); mu serialises them so neither loses the other's
// update. Readers only Load.
type fsm struct {
	logger *slog.Logger
	cur    atomic.Pointer[Image]

	mu struct {
		sync.Mutex
		// applied is closed and replaced on every publish: a broadcast to
		// WaitApplied callers.
		applied chan struct{}
	}
}

var (
	_ raft.BatchingFSM = (*fsm)(nil)
)

func newFSM(logger *slog.Logger) *fsm {
	f := &fsm{logger: logger}
	f.mu.applied = make(chan struct{})
	f.cur.Store(emptyImage())
	return f
}

func emptyImage() *Image {
	return &Image{
		ControllerID:  -1,
		Brokers:       map[int32]Broker{},
		Topics:        map[string]*Topic{},
		TopicsByID:    map[UUID]*Topic{},
		BrokerConfigs: map[string]map[string]string{},
		GroupConfigs:  map[string]map[string]string{},
		ClientQuotas:  map[string]map[string]string{},
		ClientMetrics: map[string]map[string]string{},
		Features:      map[string]int16{},
		Scram:         map[ScramKey]ScramCredential{},
	}
}

func (f *fsm) image() *Image { return f.cur.Load() }

// publishLocked installs img and wakes waiters. f.mu must be held.
func (f *fsm) publishLocked(img *Image) {
	f.cur.Store(img)
	close(f.mu.applied)
	f.mu.applied = make(chan struct{})
}

// appliedCh returns the channel closed at the next publish.
func (f *fsm) appliedCh() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.applied
}

// setController publishes a copy of the image with a new ControllerID.
func (f *fsm) setController(id int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.cur.Load()
	if cur.ControllerID == id {
		return
	}
	next := *cur
	next.ControllerID = id
	f.publishLocked(&next)
}

// Apply implements raft.FSM (raft uses ApplyBatch; this serves the
// non-batching path and tests).
func (f *fsm) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch implements raft.BatchingFSM: one new image per batch.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	b := newBuilder(f.cur.Load())
	out := make([]any, len(logs))
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			out[i] = f.applyEntry(b, l)
		}
		// Configuration entries carry no metadata, but advancing the index
		// for them lets WaitApplied see them.
		if l.Index > b.img.AppliedIndex {
			b.img.AppliedIndex = l.Index
		}
	}
	f.publishLocked(b.img)
	return out
}

// applyEntry decodes and applies one command. An unknown command type is the
// one case that cannot be answered: skipping it would let this node's image
// differ from its peers', so unless the type says "ignorable" we stop.
func (f *fsm) applyEntry(b *builder, l *raft.Log) any {
	c, err := decodeCommand(l.Data)
	if errors.Is(err, errUnknownCommand) {
		if len(l.Data) > 0 && cmdType(l.Data[0])&ignorableFlag != 0 {
			f.logger.Warn("skipping unknown ignorable metadata command", "index", l.Index, "type", l.Data[0], "err", err)
			return fmt.Errorf("index %d: %w", l.Index, err)
		}
		panic(fmt.Sprintf("raftmeta: log index %d: %v; this binary is older than the one that wrote the log, upgrade it", l.Index, err))
	}
	if err != nil {
		// Same bytes on every node, so rejecting is deterministic; it can only
		// come from a bug in an encoder.
		f.logger.Error("undecodable metadata command", "index", l.Index, "err", err)
		return fmt.Errorf("index %d: %w", l.Index, err)
	}
	return c.apply(b)
}

// Snapshot implements raft.FSM: the current image is immutable, so holding
// the pointer is the snapshot; encoding happens in Persist.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{img: f.cur.Load()}, nil
}

// Restore implements raft.FSM: decode a whole image and swap it in.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("read metadata snapshot: %w", err)
	}
	img, err := decodeImage(data)
	if err != nil {
		return fmt.Errorf("restore metadata snapshot: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	img.ControllerID = f.cur.Load().ControllerID
	f.publishLocked(img)
	return nil
}

type fsmSnapshot struct{ img *Image }

// Persist implements raft.FSMSnapshot.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(encodeImage(s.img)); err != nil {
		sink.Cancel()
		return fmt.Errorf("write metadata snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("close metadata snapshot: %w", err)
	}
	return nil
}

// Release implements raft.FSMSnapshot.
func (s *fsmSnapshot) Release() {}
