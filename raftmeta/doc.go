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
//	  log/                          pebble: raft log + raft stable store
//	  snapshots/<term>-<index>-<ms>/  raft.FileSnapshotStore, 2 retained
//	      meta.json                 raft's own metadata
//	      state.bin                 one encoded Image (snapshot.go)
//
// pebble keys (logstore.go):
//
//	0x01 | index uint64 big endian -> version(1)=1 | term uvarint | type(1)
//	                                  | appended-at varint | data | extensions
//	0x02 | stable key              -> value (raft's CurrentTerm, LastVoteTerm, ...)
//
// Every StoreLogs is one pebble batch committed with Sync, truncations are
// single range deletes; raft relies on a returned write being durable. Stable
// Sets (term, vote) are synced in cluster mode; a lone voter leaves them to
// the next synced batch of the same ordered WAL (logstore.go Set). The first
// start writes raft's term and configuration entry in one synced batch, so a
// crash leaves both or neither (logstore.go bootstrap). The parent directory
// is synced after pebble creates its own, so a crash right after the first
// start cannot lose the directory.
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
// stop raft, stop the leader watcher, close the transport, close pebble.
package raftmeta
