package schema

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Record is one record of the _schemas topic. A nil Value is a tombstone.
type Record struct {
	Offset    int64
	Timestamp int64 // milliseconds
	Key       []byte
	Value     []byte
}

// Log is the _schemas topic as the registry uses it: one partition,
// compacted. The broker adapts it onto its partition log; the registry
// never sees how records are stored.
type Log interface {
	// Append writes records, in order, as one batch and returns the offset
	// of the last once the log holds them as durably as its flush policy
	// makes any produced record, and Read can return them.
	Append(ctx context.Context, recs []Record) (last int64, err error)
	// Read returns the records from offset from on (whole batches, at least
	// one when there is any) and the offset to read next; at the end of the
	// log it returns none and from. Offsets may have holes (compaction).
	Read(ctx context.Context, from int64) (recs []Record, next int64, err error)
	// Wait returns once the log may hold a record at offset or later, or
	// when ctx is done (its error).
	Wait(ctx context.Context, offset int64) error
}

// ErrRecordTooLarge is what a Log returns (wrapped) for a record larger
// than the topic takes: the REST API answers 42209.
var ErrRecordTooLarge = errors.New("record too large for the _schemas topic")

// Options configure a Registry.
type Options struct {
	Log     Log
	Formats []Format
	// DefaultCompatibility is schema.compatibility.level ("" = BACKWARD).
	DefaultCompatibility string
	// ClusterID is the Kafka cluster id /v1/metadata/id reports, GroupID
	// the registry's (Confluent's schema.registry.group.id).
	ClusterID, GroupID string
	// Timeout bounds a write: append and read back (kafkastore.timeout.ms).
	Timeout time.Duration
	Logger  *slog.Logger
}

// Registry is the schema registry: its state is what the _schemas topic
// says, read in offset order. Writes are Confluent's leader's: one at a
// time, each validated against the state read to the end of the topic,
// appended, and answered once the registry has read its own records back.
// Records others append (a Confluent registry on the same topic, a tool)
// are read by Run as they arrive.
type Registry struct {
	log     Log
	formats map[string]Format
	types   []string
	opts    Options
	logger  *slog.Logger

	// writeMu makes writes one at a time (Confluent's leader lock).
	writeMu sync.Mutex
	// applyMu serialises reading the log into st; next is where the next
	// read starts (guarded by applyMu).
	applyMu sync.Mutex
	next    int64
	// mu guards st: writes under applyMu, reads by every request.
	mu sync.RWMutex
	st *state

	parsed parseCache
	closed atomic.Bool
}

// Open reads the topic to its end and returns the registry it describes.
func Open(ctx context.Context, opts Options) (*Registry, error) {
	if opts.Log == nil {
		return nil, errors.New("schema registry: no log")
	}
	if opts.DefaultCompatibility == "" {
		opts.DefaultCompatibility = levelBackward
	}
	l, ok := parseLevel(opts.DefaultCompatibility)
	if !ok {
		return nil, fmt.Errorf("schema registry: compatibility level %q is not one of %v", opts.DefaultCompatibility, levels)
	}
	opts.DefaultCompatibility = l
	if opts.GroupID == "" {
		opts.GroupID = "schema-registry"
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Registry{
		log:     opts.Log,
		formats: map[string]Format{},
		opts:    opts,
		logger:  opts.Logger,
		st:      newState(),
	}
	for _, f := range opts.Formats {
		if _, dup := r.formats[f.Type()]; !dup {
			r.types = append(r.types, f.Type())
		}
		r.formats[f.Type()] = f
	}
	start := time.Now()
	if err := r.catchUp(ctx, -1); err != nil {
		return nil, fmt.Errorf("schema registry: read _schemas: %w", err)
	}
	r.mu.RLock()
	n, skipped := r.st.applied, r.st.skipped
	subjects := len(r.st.subjects)
	r.mu.RUnlock()
	r.logger.Info("schema registry state read", "records", n, "skipped", skipped, "subjects", subjects,
		"next_offset", r.next, "took", time.Since(start).Round(time.Microsecond))
	return r, nil
}

// Run reads records others append until ctx is done.
func (r *Registry) Run(ctx context.Context) error {
	for {
		r.applyMu.Lock()
		next := r.next
		r.applyMu.Unlock()
		if err := r.log.Wait(ctx, next); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.logger.Warn("schema registry: waiting for _schemas", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			continue
		}
		if err := r.catchUp(ctx, -1); err != nil && ctx.Err() == nil {
			r.logger.Warn("schema registry: reading _schemas", "err", err)
		}
	}
}

// catchUp applies records until the end of the log, or until the record
// at offset until has been applied when until >= 0 (a write reading its
// own records back).
func (r *Registry) catchUp(ctx context.Context, until int64) error {
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	for until < 0 || r.next <= until {
		recs, next, err := r.log.Read(ctx, r.next)
		if err != nil {
			return err
		}
		if len(recs) == 0 && next <= r.next {
			if until < 0 {
				return nil
			}
			// Our own append is not readable yet: wait for it.
			if err := r.log.Wait(ctx, r.next); err != nil {
				return err
			}
			continue
		}
		r.mu.Lock()
		for i := range recs {
			rec := &recs[i]
			if rec.Offset < r.next {
				continue // a batch read again from its start
			}
			if err := r.st.apply(rec.Key, rec.Value, rec.Offset, rec.Timestamp); err != nil {
				r.logger.Warn("schema registry: skipping _schemas record", "offset", rec.Offset, "err", err)
			}
		}
		r.mu.Unlock()
		r.next = max(next, r.next)
	}
	return nil
}

// out is a record to write.
type out struct {
	key   recordKey
	value any // nil: tombstone
}

// write appends records and returns once they are applied. The caller
// holds writeMu.
func (r *Registry) write(ctx context.Context, outs ...out) *Error {
	recs := make([]Record, len(outs))
	for i, o := range outs {
		recs[i].Key = encodeKey(o.key)
		if o.value != nil {
			recs[i].Value = marshal(o.value)
		}
	}
	// A client that goes away does not cut a write short: it is answered
	// or it times out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.Timeout)
	defer cancel()
	last, err := r.log.Append(ctx, recs)
	if err != nil {
		switch {
		case errors.Is(err, ErrRecordTooLarge):
			return errSchemaTooLarge()
		case errors.Is(err, context.DeadlineExceeded):
			return errTimeout("Write to the Kafka store timed out while writing to _schemas")
		}
		return errStore("Error while writing to the Kafka store", err)
	}
	if err := r.catchUp(ctx, last); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return errTimeout("Write to the Kafka store timed out while reading it back")
		}
		return errStore("Error while reading back from the Kafka store", err)
	}
	return nil
}

// beginWrite takes the writer's lock and reads to the end of the topic
// (Confluent's waitUntilKafkaReaderReachesLastOffset), so a write is
// checked against everything written before it.
func (r *Registry) beginWrite(ctx context.Context) *Error {
	r.writeMu.Lock()
	if err := r.catchUp(ctx, -1); err != nil {
		r.writeMu.Unlock()
		return errStore("Error while reading the Kafka store", err)
	}
	return nil
}

func (r *Registry) endWrite() { r.writeMu.Unlock() }

// Types are the schema types served (GET /schemas/types).
func (r *Registry) Types() []string { return append([]string(nil), r.types...) }

// Stats are counts for logs and tests.
type Stats struct {
	Subjects, Versions int
	Records, Skipped   int64
	NextOffset         int64
}

// Stats reports the state's size.
func (r *Registry) Stats() Stats {
	r.applyMu.Lock()
	next := r.next
	r.applyMu.Unlock()
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := Stats{Subjects: len(r.st.subjects), Records: r.st.applied, Skipped: r.st.skipped, NextOffset: next}
	for _, e := range r.st.subjects {
		st.Versions += len(e.versions)
	}
	return st
}

// parseCache keeps parsed schemas by hash, type and normalisation, bounded:
// past its size it starts afresh (parsing is cheap, memory is not).
type parseCache struct {
	mu   sync.Mutex
	m    map[parseKey]Parsed
	norm map[parseKey]string // a stored schema's normalized canonical text
}

type parseKey struct {
	sum       [16]byte
	typ       string
	normalize bool
}

const parseCacheSize = 256

func (c *parseCache) get(k parseKey) (Parsed, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[k]
	return p, ok
}

func (c *parseCache) put(k parseKey, p Parsed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= parseCacheSize {
		c.m = make(map[parseKey]Parsed, parseCacheSize)
	}
	c.m[k] = p
}

func (c *parseCache) normalized(k parseKey) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.norm[k]
	return s, ok
}

func (c *parseCache) putNormalized(k parseKey, s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.norm == nil || len(c.norm) >= parseCacheSize*4 {
		c.norm = make(map[parseKey]string, parseCacheSize)
	}
	c.norm[k] = s
}
