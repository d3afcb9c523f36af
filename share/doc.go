// Package share holds share groups (KIP-932): the coordinator, the
// share-partition lock manager, its persistence, and the Manager that ties
// them together for the broker (sessions, timers, the persist pipeline,
// reading logs through the Logs interface declared here).
//
// A SharePartition is one (group, topic-partition): SPSO, SPEO and an
// ordered set of in-flight offset ranges, each Available, Acquired,
// Acknowledged, Archiving (waiting for a dead-letter write) or Archived
// with a delivery count and, while Acquired, an
// owner member and a lock deadline. It is a pure state machine: the clock
// comes in as an argument, it does no I/O and starts no goroutines, and
// every mutating call returns Effects (SPSO moved, records became
// available, state to persist and whether durably before answering). The
// caller serialises calls with a per-share-partition mutex.
//
// Manager.Fetch's path, per partition, under that mutex:
//
//	from := max(sp.FetchOffset(now), log.LogStartOffset())
//	data, _ := log.Read(from, maxBytes, buf)
//	src.Reset(from, data, share.Bounds{LogStart: ..., HighWatermark: ..., LastStable: ...}, aborted)
//	eff, err := sp.Acquire(member, now, share.AcquireRequest{...}, &src, &res)
//	records := share.SliceBatches(data, res.RecordsFirst, res.RecordsLast)
//	// res.Acquired -> AcquiredRecords; re-arm the timer from sp.NextWake()
//
// ShareAcknowledge (and piggy-backed acks): sp.Acknowledge, then if
// eff.Persist stage sp.AppendState and, after the mutex is released, write
// it through the Persister, with sync when eff.Durable, before answering. The single timer per share-partition calls
// sp.ExpireLocks; a closed share session or dropped connection calls
// sp.ReleaseMember. Any Effects.Available wakes parked ShareFetches.
//
// Persisted value (one pebble key per share-partition, see codec.go):
//
//	key   "s/" group 0x00 topicID[16] partition(uint32 big-endian)
//	value 0x53 'S' | version 1 | varint SPSO | varint state epoch |
//	      varint DeliveryCompleteCount | uvarint n |
//	      n x (uvarint gap from previous end | uvarint length-1 |
//	           byte DeliveryState | uvarint DeliveryCount)
//
// Durability points: with PebblePersister, Write(sync=true) commits with
// pebble.Sync. The broker uses JournaledPersister: Write(sync=true) is one
// write(2) to the node's state journal (log/statejournal, shared with the
// group and transaction coordinators; it survives a process crash, not a
// power loss unless the journal syncs every write); a checkpoint (Flush, or
// the journal reaching its CheckpointBytes) writes the staged states to
// pebble, syncs it and empties the journal. Write(sync=false) goes to
// pebble without fsync and is durable after Flush. DESIGN.md says which
// transitions need which.
package share
