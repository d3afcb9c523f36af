// Package group is the group coordinator: classic consumer groups
// (JoinGroup/SyncGroup/Heartbeat/LeaveGroup with the states Empty,
// PreparingRebalance, CompletingRebalance, Stable and Dead), KIP-848
// consumer groups (member epochs, server-side assignors, incremental
// reconciliation), KIP-1071 streams groups (topologies checked against the
// topics, internal topics to create, a sticky task assignor, the same
// revoke-before-reassign reconciliation; streams.go) and the committed
// offsets of all of them.
//
// It knows no wire format: the broker decodes requests and calls the
// Coordinator with plain Go values, and maps the sentinel errors to Kafka
// codes with ErrorCode.
//
// Concurrency: one mutex (Coordinator.mu) guards every group. Requests that
// wait (JoinGroup until the rebalance completes, SyncGroup until the leader
// sends the assignment) park on a buffered channel outside the lock; timers
// (sessions, rebalance, revocation) come from an injectable clock
// (log/clock) and take the lock when they fire, checking a sequence number
// so that a timer stopped too late does nothing. The mutex is a leaf: the
// Topics and Settings callbacks of Config run with it held and must only
// read (the broker's metadata image and config are atomic pointers).
// OffsetCommit writes the store without it, holding a per-group stripe
// (Coordinator.io) that orders one group's store writes; rare admin
// deletions write under both. Lock order: io stripe, then mu (with the
// cross-package orders in docs/locking.md).
//
// Durability: committed offsets are written through an OffsetStore before
// OffsetCommit answers. The broker's store journals each write
// (log/statejournal): one write(2) that survives a process crash, as
// Kafka's __consumer_offsets does in the page cache, and an fsync only with
// log.flush.interval.messages=1 or at a checkpoint. Group membership (and a streams group's topology)
// is not stored: after a restart members get UNKNOWN_MEMBER_ID and rejoin
// (streams members with their topology), as they do in Kafka after a
// coordinator moves.
//
// Offset store format (pebble, shared <log.dirs>/state, prefix "g/"):
//
//	key   = "g/" uvarint(len(group)) group uvarint(len(topic)) topic be32(partition)
//	value = 0x6f ('o' magic) 0x01 (version) varint(offset) varint(leaderEpoch)
//	        varint(commitTimeMs) uvarint(len(metadata)) metadata
//
// The length prefixes make "every key of a group" a key prefix, so deleting
// a group is one range delete. Migration: a new value version gets a new
// version byte; decoders accept version 1 and report anything else.
package group
