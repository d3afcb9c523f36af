// Package txn is sharq's transaction coordinator: transactional ids,
// producer ids and epochs, the transaction state machine, markers and
// timeouts, as Apache Kafka 4.4's TransactionCoordinator with
// transaction.version=2 (KIP-890).
//
// # State machine
//
//	Empty ──AddPartitions/AddGroup──> Ongoing ──EndTxn──> PrepareCommit|PrepareAbort
//	  ^                                                        │ markers, staged offsets
//	  └──InitProducerId── CompleteCommit|CompleteAbort <────────┘
//
// InitProducerId bumps the epoch (fencing older producers; a new producer
// id once the epoch is exhausted) and first aborts an open transaction with
// a fenced epoch. EndTxn v5+ (TV2) bumps the epoch again: the markers carry
// the new epoch, so a late write of the old epoch is refused by the log.
// Errors follow Kafka's TV2 retry table (a retry with the previous epoch of
// a completed EndTxn succeeds; otherwise PRODUCER_FENCED or
// INVALID_TXN_STATE).
//
// # Synchronous completion
//
// Kafka answers EndTxn once the Prepare state is durable and writes the
// markers in the background. Here the coordinator writes the decision, the
// markers (Markers, one COMMIT/ABORT control batch per partition of the
// transaction) and the staged offsets (Offsets) in the call, then the
// Complete state: a read_committed consumer sees the outcome as soon as the
// producer does. A failed marker write leaves the transaction prepared
// (durable); CompleteUnfinished, run at start and every abort interval,
// finishes it, and until then the producer gets CONCURRENT_TRANSACTIONS.
//
// # Timeouts
//
// AbortTimedOut (every transaction.abort.timed.out.transaction.cleanup.
// interval.ms) aborts transactions open longer than their timeout with a
// fenced epoch; ExpireIDs (every transaction.remove.expired.transaction.
// cleanup.interval.ms) removes ids idle longer than
// transactional.id.expiration.ms. The clock is Config.Now, so tests drive
// both without sleeping.
//
// # Durable state (pebble, shared <log.dirs>/state, prefix "t/")
//
//	key   = "t/" transactionalId
//	value = 't' | version 1 | producerId i64 | prevProducerId i64 |
//	        nextProducerId i64 | epoch i16 | lastEpoch i16 | timeoutMs i32 |
//	        state u8 | flags u8 (bit 0: TV2) | startMs i64 | lastUpdateMs i64 |
//	        uvarint n, n x (uvarint len, topic, partition i32) |
//	        uvarint g, g x (uvarint len, group)
//
// Every transition is durable before it takes effect, so a crash loses
// nothing acknowledged: an open transaction is still open after a restart
// (and times out if its producer is gone), a prepared one is completed.
// The broker uses JournaledStore (journal.go): a transition is committed
// through the broker's state journal (log/statejournal), one write(2) that
// survives a killed process (an fsync too when the operator asks for
// flush-per-message), then written to pebble without sync; pebble synced
// at checkpoints. A pebble Sync write per transition cost two fsyncs per
// commit, the whole tail of its latency.
//
// Producer ids come from IDAllocator, which reserves blocks of 1000 through
// the metadata store: the idempotent path (NewProducerID) is a mutex and a
// counter.
package txn
