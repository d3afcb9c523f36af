// Package log is sharq's storage engine: one append-only log per topic
// partition, made of segment files in Apache Kafka's own on-disk formats,
// so that Kafka's tools (kafka-dump-log.sh) read them and operators find
// what they expect.
//
// # Files
//
//	<dataDir>/topics/<topic>-<partition>/
//	    00000000000000000000.log        record batches, as produced
//	    00000000000000000000.index      sparse offset index
//	    00000000000000000000.timeindex  sparse time index
//	    00000000000000001234.log        next segment: its name is its base offset
//	    ...
//	    00000000000000001234.snapshot   producer state at offset 1234 (sharq format)
//	    00000000000000001234.txnindex   aborted transactions whose marker is in that segment
//	    leader-epoch-checkpoint         epoch -> start offset (Kafka text format)
//	    log-start-offset-checkpoint     log start moved by DeleteRecords
//	    recovery-point-offset-checkpoint first segment that may not be fsynced
//	    partition.metadata              "version: 0\ntopic_id: <id>" (Kafka's)
//	    cleaner-offset-checkpoint       where the last cleaner pass ended (compaction)
//	    cleaner-swap, *.cleaned, *.swap a cleaner swap in progress (see Compaction)
//	    .clean-shutdown                 present only after a clean Close
//
// Names are 20-digit zero-padded base offsets, so they sort lexically.
// Files being replaced are written as <name>.tmp first; leftovers are
// removed on open. A deleted partition directory is first renamed to
// <topic>-<partition>.<id>-delete. A directory whose partition.metadata
// names another topic id than the topic's (a topic deleted and re-created
// while this node missed it) is renamed to <topic>-<partition>.<its id in
// hex>-stray, as Kafka sets stray logs aside, and never served; sharq does
// not delete it.
//
// # .log: v2 RecordBatch, big-endian, back to back
//
//	offset  size  field
//	     0     8  baseOffset            assigned in place by Append
//	     8     4  batchLength           bytes after this field
//	    12     4  partitionLeaderEpoch  assigned in place by Append
//	    16     1  magic                 2
//	    17     4  crc                   CRC-32C (Castagnoli) of bytes 21..end
//	    21     2  attributes            bits 0-2 compression, 3 timestamp type,
//	                                    4 transactional, 5 control
//	    23     4  lastOffsetDelta
//	    27     8  baseTimestamp
//	    35     8  maxTimestamp          rewritten for LogAppendTime (CRC recomputed)
//	    43     8  producerId
//	    51     2  producerEpoch
//	    53     4  baseSequence
//	    57     4  recordCount
//	    61     -  records (compressed as a whole if bits 0-2 are set)
//
// The CRC does not cover baseOffset and partitionLeaderEpoch, so assigning
// them costs nothing; only LogAppendTime recomputes it. Every batch has
// its record framing and offset deltas checked on append, compressed ones
// after streaming decompression (compressed.go), as Kafka's LogValidator
// does; the bytes are stored as produced, never recompressed.
//
// # .index: 8-byte entries (int32 offset - baseOffset, int32 file position)
//
// One entry whenever more than index.interval.bytes were appended since the
// last one, naming the last offset of a batch and where the batch starts
// (Kafka's LogSegment.append rule). Lookups take the last entry <= the
// target and walk batch headers from there.
//
// # .timeindex: 12-byte entries (int64 timestamp, int32 offset - baseOffset)
//
// Added with each .index entry when the segment's largest timestamp grew,
// plus a final entry at roll, so the last entry of a sealed segment is its
// largest timestamp (used by retention.ms and OffsetForTimestamp).
//
// # Producer snapshot (<offset>.snapshot, sharq's own format)
//
//	"SQPS" | version u8 (2; 1 is still read) | count u32 | entries | CRC-32C u32
//	entry: producerId i64 | epoch i16 | lastTimestamp i64 | txnFirst i64 |
//	       coordinatorEpoch i32 | n u8 |
//	       n x (firstSeq i32 | lastSeq i32 | firstOffset i64 | lastOffsetDelta i32)
//
// Written at every roll (state before the new segment) and at Close (state
// at the log end). Kafka names the file the same way, but its content is
// Kafka's format only in name: Kafka tools must not be pointed at it.
//
// # Transactions
//
// A transactional batch opens its producer's transaction in the partition
// (its first offset is kept in the producer state, and snapshotted); a
// COMMIT or ABORT control batch written by AppendMarker closes it. The last
// stable offset is the first offset of the oldest open transaction, or the
// high watermark; ReadCommitted stops there. Every ABORT adds an entry to
// the segment's .txnindex (Kafka's format, see txnindex.go), which Fetch
// turns into AbortedTransactions; recovery rebuilds the entries of what it
// replays.
//
// # Open logs
//
// Manager.Partition registers a partition without I/O; its log is opened
// on first use (Partition.Acquire) and by the manager's start-up check,
// which opens and closes again every partition not in use so that broken
// ones are found early. Past Options.MaxOpenLogs (from RLIMIT_NOFILE) the
// least recently used unpinned logs are closed, so open descriptors do not
// grow with the partition count. A cleanly closed log keeps its clean
// shutdown marker while it only serves reads, so opening and closing it
// costs no write and no fsync; the first change removes the marker first.
//
// # Memory
//
// Only the active segment keeps its indexes in memory (at most
// segment.bytes / index.interval.bytes entries, and never more than Kafka's
// 10 MiB segment.index.bytes: the segment rolls first). Sealed segments are
// looked up through their index files with positioned reads, so the OS page
// cache, not the heap, holds them. There are no per-record structures; the
// producer state is per producer id (bounded by producer.id.expiration.ms).
//
// # Durability and fsync points
//
//	Append       write(2) of the batch at the end of the active .log. With
//	             flush.messages=1 the call returns only after an fsync that
//	             covers it; concurrent appenders share one fsync (group
//	             commit) and readers see data only once it is synced. With
//	             flush.messages=N / flush.ms the fsync happens when the count
//	             or time is reached; by default it is left to the OS.
//	after fsync  the index entries that point into the now durable data are
//	             written to .index/.timeindex a page (512 entries) at a time,
//	             not fsynced: recovery checks them.
//	roll         the old segment's final time index entry is added, its
//	             producer snapshot written (tmp, fsync, rename), the new
//	             .log/.index/.timeindex created and the directory fsynced.
//	             The old segment's .log is then fsynced, and only after that
//	             its index files written and fsynced, so index entries on
//	             disk always point at durable data. In always-sync mode this
//	             happens in the roll (for segments sealed before the mode
//	             changed too); otherwise in the background, as Kafka
//	             does, so producers never wait for a segment-sized fsync
//	             (until then the segment is served from its in-memory
//	             index). When it is done the recovery point checkpoint moves
//	             up to the first segment that is not yet durable.
//	checkpoints  leader-epoch-checkpoint, log-start-offset-checkpoint and
//	             recovery-point-offset-checkpoint are replaced atomically
//	             (tmp, fsync, rename, fsync directory). The epoch checkpoint
//	             is written before the first batch of a new epoch.
//	Flush,       fsync every sealed segment still waiting for its background
//	TruncateTo   fsync (all of them, even if one's index write fails), then
//	             the active segment.
//	Close        wait for background fsyncs; fsync .log, write and fsync the
//	             active indexes, producer snapshot, then .clean-shutdown.
//	             A log that failed (also in a background fsync Close waited
//	             for) gets no marker and Log.Close returns the failure;
//	             Manager.Close does not (it was logged when it happened).
//
// A failed write (a full disk: ENOSPC, maybe after a short write) changes
// nothing: the partial write is cut off again, a failed roll removes the
// new segment's files, a failed checkpoint leaves the old one (atomic
// replace), index entries not written stay in memory for the next sync.
// The caller gets ErrStorage (KAFKA_STORAGE_ERROR) at once and the next
// write tries again, so the log resumes by itself when space returns. A
// failed fsync of data makes the log unusable (ErrStorage) until it is
// reopened, as the page cache cannot be trusted after it (fsyncgate); the
// manager's Partition handle reopens it, recovering from what is on disk,
// on the first use after Options.OfflineRetryInterval.
//
// # Recovery
//
// The clean-shutdown marker is removed (durably) before the first write.
// After a clean stop everything is trusted. After an unclean stop:
//
//   - Sealed segments below the recovery point are trusted; their tail
//     after the last index entry is checked (framing, CRC, and that it ends
//     where the next segment begins). A segment failing that is reported by
//     file name as an ErrStorage error, never served. A damaged index of
//     such a segment is rebuilt from it, and so is one emptied or cut
//     short: the tail check sees more than index.interval.bytes after the
//     last .index entry, or no .timeindex entry for the largest timestamp.
//   - Sealed segments from the recovery point on (their background fsync
//     may not have finished) are scanned completely and their indexes
//     rebuilt; one that ends early is cut there, becomes the active segment,
//     and the segments after it are removed (and logged).
//   - The active segment: every index entry on disk is checked against the
//     batch header it names (entries are written unsynced, so their tail may
//     be torn), then batches are scanned from the last good entry.
//
// Scans check length, magic, CRC-32C, offset continuity and that the leader
// epoch (which the CRC does not cover) is not newer than the epoch
// checkpoint; the file is truncated at the first bad batch, fsynced, and
// what was cut is logged (file, position, bytes, log end offset, reason).
// Producer state comes from the newest snapshot at or below the log end
// plus a scan of the batches after it (newer snapshots are removed); the
// leader epoch cache is cut at the log end and completed from the scan.
//
// # Concurrency
//
// All Log methods are safe for concurrent use; see the Log type for the
// lock order. Reads do not take the append lock and do no I/O under any
// lock; a segment being deleted stays open until its last reader is done.
//
// # Compaction (cleaner.go, cleanswap.go)
//
// For cleanup.policy=compact the cleaner rewrites sealed segments below
// the first unstable offset and the active segment, keeping the latest record of each key (Kafka's LogCleaner; see
// cleaner.go for the rules). Each group of segments [B, E) of a pass
// becomes one segment with base B; on disk:
//
//	B.log.cleaned, B.index.cleaned, B.timeindex.cleaned (B.txnindex.cleaned)
//	                           written and fsynced, for every group
//	cleaner-swap               "0\n<n>\n<B> <E>\n...": the groups, written
//	                           atomically (its directory fsync makes the
//	                           .cleaned names durable)
//	--- under appendMu ---
//	*.cleaned -> *.swap        the .log last: B.log.swap is group B's commit
//	                           point; directory fsync
//	segments in (B, E) removed, each .swap renamed over B's file (.log last),
//	cleaner-swap removed       directory fsync; then the segment list is
//	                           swapped in memory
//
// At open, before anything else, for each group of a cleaner-swap: with
// B.log.swap present the swap is completed (segments in (B, E) removed,
// .swap files renamed); with B.log.cleaned present it is rolled back (the
// old segments were not touched); otherwise it had completed and only
// leftovers in (B, E) go. Other .cleaned and .swap files are removed.
//
// A cleaned segment has holes: batches' base offsets only grow and the
// segment may end before the next one starts. Recovery accepts that
// (segment.holes) in logs that are compacted or were cleaned before (the
// per-partition cleaner-offset-checkpoint, where the last pass ended, is
// written before the first swap): a segment scanned after a crash that
// ends cleanly before the next one is whole there (as in Kafka, which
// never checks), one with a bad tail still ends the log. All other logs
// keep the strict continuity checks. Reads from an offset in a hole at a segment's end move
// on to the next segment, as Kafka's do.
package log
