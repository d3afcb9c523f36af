package log

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type topicPartition struct {
	topic     string
	partition int32
}

// Manager owns <dataDir>/topics: it opens, creates and deletes partition
// logs and runs retention and time-based flushes in the background.
type Manager struct {
	dir    string
	fs     FS
	logger *slog.Logger
	now    func() time.Time
	opts   Options
	bgSem  chan struct{} // shared bound on background segment fsyncs
	// startBG is handed to every log it opens (Log.startBG); tests only.
	startBG func(func())

	// Open logs are bounded (each holds three descriptors per segment):
	// past maxOpen the least recently used are closed (partition.go).
	maxOpen  int
	openLogs atomic.Int64
	// open is the set of open logs, for the periodic flush: walking every
	// handle each tick would cost (and allocate) per partition, not per
	// open log. openMu is taken alone (inside a handle's lock).
	openMu   sync.Mutex
	open     map[*Log]struct{}
	clock    atomic.Int64 // use counter for least-recently-used
	evicting atomic.Bool
	evictWG  sync.WaitGroup

	cleaner *cleaner // log compaction (cleaner.go)

	mu struct {
		sync.Mutex
		parts  map[topicPartition]*Partition
		closed bool
		// onDisk: the directory names found at start; a partition
		// registered without one is known to be empty before its first use.
		onDisk map[string]bool
	}
}

// deleteSuffix marks a partition directory being deleted (Kafka renames to
// <topic>-<partition>.<id>-delete first, so a crash mid-delete never leaves
// a half-deleted log that looks live).
const deleteSuffix = "-delete"

// NewManager prepares <dataDir>/topics and removes leftovers of
// interrupted deletions.
func NewManager(dataDir string, opts Options) (*Manager, error) {
	if opts.FS == nil {
		opts.FS = OSFS{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RetentionCheckInterval <= 0 {
		opts.RetentionCheckInterval = 5 * time.Minute // log.retention.check.interval.ms
	}
	if opts.OfflineRetryInterval == 0 {
		opts.OfflineRetryInterval = defaultOfflineRetryInterval
	}
	if opts.MaxOpenLogs <= 0 {
		opts.MaxOpenLogs = defaultMaxOpenLogs()
	}
	m := &Manager{
		dir:     filepath.Join(dataDir, "topics"),
		fs:      opts.FS,
		logger:  opts.Logger.With("component", "log"),
		now:     opts.Now,
		opts:    opts,
		bgSem:   make(chan struct{}, maxBackgroundSyncs),
		maxOpen: opts.MaxOpenLogs,
		open:    map[*Log]struct{}{},
	}
	m.mu.parts = map[topicPartition]*Partition{}
	m.cleaner = newCleaner(m, opts.Cleaner)
	if err := m.fs.MkdirAll(m.dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: create %s: %w", ErrStorage, m.dir, err)
	}
	if err := m.fs.SyncDir(dataDir); err != nil {
		return nil, fmt.Errorf("%w: sync %s: %w", ErrStorage, dataDir, err)
	}
	names, err := m.fs.ReadDir(m.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: list %s: %w", ErrStorage, m.dir, err)
	}
	m.mu.onDisk = make(map[string]bool, len(names))
	for _, n := range names {
		m.mu.onDisk[n] = true
		if strings.HasSuffix(n, deleteSuffix) {
			if err := m.fs.RemoveAll(filepath.Join(m.dir, n)); err != nil {
				return nil, fmt.Errorf("%w: remove %s: %w", ErrStorage, n, err)
			}
		}
	}
	return m, nil
}

// PartitionID names a partition directory.
type PartitionID struct {
	Topic     string
	Partition int32
}

// Partitions lists the partition directories on disk (open or not), for
// the broker to open at startup.
func (m *Manager) Partitions() ([]PartitionID, error) {
	names, err := m.fs.ReadDir(m.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: list %s: %w", ErrStorage, m.dir, err)
	}
	var out []PartitionID
	for _, n := range names {
		i := strings.LastIndexByte(n, '-')
		if i <= 0 || strings.HasSuffix(n, deleteSuffix) || strings.HasSuffix(n, strayDirSuffix) {
			continue
		}
		p, err := strconv.ParseInt(n[i+1:], 10, 32)
		if err != nil || p < 0 {
			continue
		}
		out = append(out, PartitionID{n[:i], int32(p)})
	}
	return out, nil
}

func (m *Manager) partitionDir(topic string, partition int32) string {
	return filepath.Join(m.dir, topic+"-"+strconv.FormatInt(int64(partition), 10))
}

// defaultOfflineRetryInterval is how often an offline partition's open is
// retried (on use) when Options.OfflineRetryInterval is 0.
const defaultOfflineRetryInterval = 10 * time.Second

func validTopicDirName(topic string) bool {
	return topic != "" && !strings.ContainsAny(topic, "/\\") && topic != "." && topic != ".."
}

// Partition returns the handle of a partition log, registering it with cfg
// if it is new (an existing handle gets cfg as its new config). It does no
// I/O: the log is opened by the handle's Acquire.
//
// A non-zero id is the topic's id: the partition directory must carry it in
// partition.metadata (written when the directory is created, or on the
// first open of a directory from before the file); one of another id is
// set aside, never served.
func (m *Manager) Partition(topic string, partition int32, id TopicID, cfg Config) *Partition {
	m.mu.Lock()
	tp := topicPartition{topic, partition}
	p := m.mu.parts[tp]
	if p == nil {
		p = &Partition{m: m, topic: topic, partition: partition, id: id, cfg: cfg}
		if !m.mu.onDisk[filepath.Base(m.partitionDir(topic, partition))] {
			// a new partition: its log will be created empty at offset 0
			p.haveStats = true
		}
		if m.mu.closed {
			p.removed = true
		} else {
			m.mu.parts[tp] = p
		}
		m.mu.Unlock()
		return p
	}
	m.mu.Unlock()
	p.SetConfig(cfg)
	return p
}

// Open returns the partition's log, creating it or opening (and, after an
// unclean stop, recovering) it from disk. An already open log is returned
// as is (use SetConfig to change its config). The log stays open until
// Delete or Close.
func (m *Manager) Open(topic string, partition int32, cfg Config) (*Log, error) {
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	p := m.mu.parts[topicPartition{topic, partition}]
	m.mu.Unlock()
	if p == nil {
		p = m.Partition(topic, partition, TopicID{}, cfg)
	}
	p.mu.Lock()
	p.permanent = true
	// Callers of Open expect the error at once, not a remembered one.
	p.offline = nil
	p.mu.Unlock()
	l, err := p.Acquire()
	if err != nil {
		return nil, err
	}
	p.Release()
	return l, nil
}

// openDir opens or creates the log in the partition's directory.
func (m *Manager) openDir(topic string, partition int32, id TopicID, cfg Config) (*Log, error) {
	if !validTopicDirName(topic) {
		return nil, fmt.Errorf("%w: invalid topic name %q", ErrStorage, topic)
	}
	dir := m.partitionDir(topic, partition)
	writeID, err := m.checkTopicID(dir, id)
	if err != nil {
		return nil, fmt.Errorf("open partition %s-%d: %w", topic, partition, err)
	}
	_, statErr := m.fs.ReadDir(dir)
	l, err := openLog(m.fs, dir, topic, partition, cfg, m.logger, m.now)
	if err != nil {
		return nil, fmt.Errorf("open partition %s-%d: %w", topic, partition, err)
	}
	if writeID {
		if err := l.writePartitionMetadata(id); err != nil {
			l.Close()
			return nil, fmt.Errorf("open partition %s-%d: %w", topic, partition, err)
		}
	}
	if statErr != nil {
		// new directory: make its entry in topics/ durable
		if err := m.fs.SyncDir(m.dir); err != nil {
			l.Close()
			return nil, fmt.Errorf("%w: sync %s: %w", ErrStorage, m.dir, err)
		}
	}
	l.bgSem = m.bgSem
	l.startBG = m.startBG
	return l, nil
}

// Get returns an open log or nil.
func (m *Manager) Get(topic string, partition int32) *Log {
	m.mu.Lock()
	p := m.mu.parts[topicPartition{topic, partition}]
	m.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Peek()
}

// Offline lists the partitions that cannot be served, and why.
func (m *Manager) Offline() []OfflinePartition {
	var out []OfflinePartition
	for _, p := range m.handles() {
		if err := p.Offline(); err != nil {
			out = append(out, OfflinePartition{p.topic, p.partition, err})
		}
	}
	return out
}

func (m *Manager) handles() []*Partition {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Partition, 0, len(m.mu.parts))
	for _, p := range m.mu.parts {
		out = append(out, p)
	}
	return out
}

// Delete closes the partition's log (if open) and removes its files.
func (m *Manager) Delete(topic string, partition int32) error {
	m.mu.Lock()
	tp := topicPartition{topic, partition}
	p := m.mu.parts[tp]
	delete(m.mu.parts, tp)
	delete(m.mu.onDisk, filepath.Base(m.partitionDir(topic, partition)))
	m.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.removed = true
		p.closeLocked()
		p.mu.Unlock()
	}
	dir := m.partitionDir(topic, partition)
	if _, err := m.fs.ReadDir(dir); err != nil {
		if isNotExist(err) {
			return nil
		}
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	doomed := dir + "." + strconv.FormatInt(m.now().UnixNano(), 36) + deleteSuffix
	if err := m.fs.Rename(dir, doomed); err != nil {
		return fmt.Errorf("%w: rename %s: %w", ErrStorage, dir, err)
	}
	if err := m.fs.SyncDir(m.dir); err != nil {
		return fmt.Errorf("%w: sync %s: %w", ErrStorage, m.dir, err)
	}
	if err := m.fs.RemoveAll(doomed); err != nil {
		return fmt.Errorf("%w: remove %s: %w", ErrStorage, doomed, err)
	}
	return nil
}

// snapshot returns the open logs.
func (m *Manager) snapshot() []*Log {
	m.openMu.Lock()
	defer m.openMu.Unlock()
	logs := make([]*Log, 0, len(m.open))
	for l := range m.open {
		logs = append(logs, l)
	}
	return logs
}

// maxBackgroundSyncs bounds concurrent background fsyncs of sealed
// segments (a disk serves few at once; more only queue in the kernel).
const maxBackgroundSyncs = 4

// flushTick is how often flush.ms deadlines are checked.
const flushTick = 100 * time.Millisecond

// Run applies retention every RetentionCheckInterval, flushes logs whose
// flush.ms elapsed and runs the log cleaner's threads (unless
// Options.Cleaner.Disable), until ctx is done. It returns nil then.
//
// It first opens every registered partition that is not open yet, one at a
// time, and closes it again, so that partitions that cannot be served are
// found (and reported by Offline) soon after start rather than on first
// use, without keeping them loaded.
func (m *Manager) Run(ctx context.Context) error {
	if m.Check(ctx) > 0 {
		// The check's garbage (index and scan buffers of every log it
		// opened) is gone, but the runtime would hand the pages back to the
		// OS only over minutes: an idle broker should look idle at once.
		debug.FreeOSMemory()
	}
	m.cleaner.start(ctx)
	defer m.cleaner.wg.Wait()
	retention := time.NewTicker(m.opts.RetentionCheckInterval)
	defer retention.Stop()
	flush := time.NewTicker(flushTick)
	defer flush.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-retention.C:
			m.RunRetention()
		case <-flush.C:
			m.flushDue()
		}
	}
}

// Check opens every registered partition log that is not open and closes
// it again (see Run), until ctx is done. It returns how many it visited.
func (m *Manager) Check(ctx context.Context) int {
	n := 0
	for _, p := range m.handles() {
		if ctx.Err() != nil {
			break
		}
		p.visit(func(*Log) {}) // an error is kept (Offline) and logged by the handle
		n++
	}
	return n
}

// RunRetention applies retention to every log once: open ones, and the
// others through a passing open (a closed partition still ages).
func (m *Manager) RunRetention() {
	now := m.now()
	for _, p := range m.handles() {
		p.visit(func(l *Log) {
			if err := l.applyRetention(now); err != nil {
				m.logger.Error("retention failed", "topic", l.topic, "partition", l.partition, "err", err)
			}
		})
	}
}

// OpenLogs is how many partition logs are open now.
func (m *Manager) OpenLogs() int { return int(m.openLogs.Load()) }

func (m *Manager) flushDue() {
	nowMs := m.now().UnixMilli()
	for _, l := range m.snapshot() {
		l.mu.RLock()
		flushMs := l.mu.cfg.FlushMs
		l.mu.RUnlock()
		if flushMs <= 0 || nowMs-l.lastFlushMs.Load() < flushMs || !l.dirty() {
			continue
		}
		if err := l.Flush(); err != nil && !errors.Is(err, ErrClosed) {
			m.logger.Error("flush failed", "topic", l.topic, "partition", l.partition, "err", err)
		}
	}
}

// Close flushes and closes every log, leaving clean shutdown markers. A
// log that failed earlier (and was logged then), or whose background fsync
// of a sealed segment fails while Close waits for it, is closed without its
// marker, for the next start to recover; that is not an error of Close.
// So nil does not mean that such a log's unflushed data is durable:
// Log.Close's error says that.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.mu.closed = true
	parts := m.mu.parts
	m.mu.parts = map[topicPartition]*Partition{}
	m.mu.Unlock()
	m.evictWG.Wait()
	var errs []error
	for _, p := range parts {
		p.mu.Lock()
		p.removed = true
		if err := p.closeLocked(); err != nil {
			errs = append(errs, fmt.Errorf("close %s-%d: %w", p.topic, p.partition, err))
		}
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}
