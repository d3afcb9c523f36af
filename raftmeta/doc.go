// Package raftmeta is sharq's cluster metadata: brokers, topics (names, ids,
// partitions, leaders and epochs), topic/broker/group configs, finalized
// feature levels and producer-id blocks, replicated with hashicorp/raft.
//
// Reading: Store.Image returns an immutable *Image through an atomic pointer.
// It never blocks and never allocates; a handler keeps using the image it got
// even while newer ones are published.
//
// Writing: each mutating Store method encodes one command, proposes it to raft
// and returns once the command is applied on this node, so the next Image()
// shows the change. Rejections (ErrTopicExists, ErrUnknownTopic,
// ErrInvalidPartitions, ...) are decided inside the FSM, deterministically on
// every node. A non-leader answers ErrNotController. ErrorCode maps every
// error to the Kafka error code.
//
// A single node (Config.Voters empty) runs a one-voter raft over an in-memory
// transport: Open bootstraps it on first start, elects it in a few
// milliseconds and writes the bootstrap command (cluster id, feature levels).
// With Voters set, raft talks TCP on Config.BindAddr.
//
// # On disk
//
//	<Dir>/                          (the broker passes <log.dirs>/meta)
//	  log/raft.wal                  raft log + raft stable store (filestore.go)
//	  log/raft.lock                 keeps a second process out
//	  snapshots/<term>-<index>-<ms>/  raft.FileSnapshotStore, 2 retained
//	      meta.json                 raft's own metadata
//	      state.bin                 one encoded Image (snapshot.go)
//
// raft.wal (walformat.go has the byte layout):
//
//	"SQRWAL" 0x00 | version(1)=1 | record*
//	record = length uint32 | crc32c uint32 | type(1)=batch | op+
//	op     = entries (first index, count, encodeLog values) | delete [min, max] | set (key, value)
//	entry  = version(1)=1 | term uvarint | type(1) | appended-at varint | data | extensions
//
// Every StoreLogs is one record, written with one write and synced before it
// returns; raft relies on a returned write being durable. Open replays the
// file into memory, cuts a torn last record and fails with ErrCorrupt on a
// bad record followed by a good one. Stable Sets (term, vote) are synced in
// cluster mode; a lone voter's ride in the next synced record
// (fileStore.Set). The first start writes raft's term and configuration entry in one
// record, so a crash leaves both or neither (fileStore.bootstrap). The file
// is rewritten with only its live state once it is mostly dead. A data dir
// of a version that kept the raft log in pebble (<Dir>/log as a pebble DB)
// is migrated on its first open (DESIGN.md).
//
// Raft log entry data (codec.go): type(1) | version(1) | payload. The type's
// high bit marks commands an older node may skip; any other unknown type (or
// payload version) panics rather than let the node's image diverge from its
// peers'. codec.go carries the format migration rules.
//
// Snapshot (snapshot.go): "SQMI" | version(1)=1 | payload | crc32c.
//
// # Concurrency
//
// raft's FSM goroutine is the only writer of images (Apply, ApplyBatch,
// Restore) apart from the leader observer, which only changes ControllerID;
// fsm.mu serialises the two. Nothing does I/O under it. Readers never lock.
// Snapshot captures the current image pointer; Persist encodes it while
// applies continue, since images are never mutated.
//
// # Shutdown
//
// Close: mark closed (pending proposals and WaitApplied return ErrClosed),
// stop raft, stop the leader watcher, close the transport, close the raft
// log store.
package raftmeta
