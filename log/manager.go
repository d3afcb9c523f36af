package log

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

	mu struct {
		sync.Mutex
		logs   map[topicPartition]*Log
		closed bool
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
	m := &Manager{
		dir:    filepath.Join(dataDir, "topics"),
		fs:     opts.FS,
		logger: opts.Logger.With("component", "log"),
		now:    opts.Now,
		opts:   opts,
		bgSem:  make(chan struct{}, maxBackgroundSyncs),
	}
	m.mu.logs = map[topicPartition]*Log{}
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
	for _, n := range names {
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
		if i <= 0 || strings.HasSuffix(n, deleteSuffix) {
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

// Open returns the partition's log, creating it or opening (and, after an
// unclean stop, recovering) it from disk. An already open log is returned
// as is (use SetConfig to change its config).
func (m *Manager) Open(topic string, partition int32, cfg Config) (*Log, error) {
	if topic == "" || strings.ContainsAny(topic, "/\\") || topic == "." || topic == ".." {
		return nil, fmt.Errorf("%w: invalid topic name %q", ErrStorage, topic)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, ErrClosed
	}
	tp := topicPartition{topic, partition}
	if l := m.mu.logs[tp]; l != nil {
		return l, nil
	}
	dir := m.partitionDir(topic, partition)
	_, statErr := m.fs.ReadDir(dir)
	l, err := openLog(m.fs, dir, topic, partition, cfg, m.logger, m.now)
	if err != nil {
		return nil, fmt.Errorf("open partition %s-%d: %w", topic, partition, err)
	}
	if statErr != nil {
		// new directory: make its entry in topics/ durable
		if err := m.fs.SyncDir(m.dir); err != nil {
			l.Close()
			return nil, fmt.Errorf("%w: sync %s: %w", ErrStorage, m.dir, err)
		}
	}
	l.bgSem = m.bgSem
	m.mu.logs[tp] = l
	return l, nil
}

// Get returns an open log or nil.
func (m *Manager) Get(topic string, partition int32) *Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.logs[topicPartition{topic, partition}]
}

// Delete closes the partition's log (if open) and removes its files.
func (m *Manager) Delete(topic string, partition int32) error {
	m.mu.Lock()
	tp := topicPartition{topic, partition}
	l := m.mu.logs[tp]
	delete(m.mu.logs, tp)
	m.mu.Unlock()
	if l != nil {
		l.Close()
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

func (m *Manager) snapshot() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	logs := make([]*Log, 0, len(m.mu.logs))
	for _, l := range m.mu.logs {
		logs = append(logs, l)
	}
	return logs
}

// maxBackgroundSyncs bounds concurrent background fsyncs of sealed
// segments (a disk serves few at once; more only queue in the kernel).
const maxBackgroundSyncs = 4

// flushTick is how often flush.ms deadlines are checked.
const flushTick = 100 * time.Millisecond

// Run applies retention every RetentionCheckInterval and flushes logs
// whose flush.ms elapsed, until ctx is done. It returns nil then.
func (m *Manager) Run(ctx context.Context) error {
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

// RunRetention applies retention to every open log once.
func (m *Manager) RunRetention() {
	now := m.now()
	for _, l := range m.snapshot() {
		if err := l.applyRetention(now); err != nil {
			m.logger.Error("retention failed", "topic", l.topic, "partition", l.partition, "err", err)
		}
	}
}

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

// Close flushes and closes every log, leaving clean shutdown markers.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.mu.closed = true
	logs := m.mu.logs
	m.mu.logs = map[topicPartition]*Log{}
	m.mu.Unlock()
	var errs []error
	for _, l := range logs {
		if err := l.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s-%d: %w", l.topic, l.partition, err))
		}
	}
	return errors.Join(errs...)
}
