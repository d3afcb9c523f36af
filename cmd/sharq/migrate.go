package main

// sharq migrate share-offsets: carry share groups' positions across a
// MirrorMaker 2 migration, which mirrors topics and consumer groups but not
// share groups (docs/migrating-to-kafka.md).
//
//	sharq migrate share-offsets --source HOST:PORT --group G [--group G2 ...]
//	    [--offset-syncs-bootstrap HOST:PORT] [--offset-syncs-topic NAME | --target-alias ALIAS]
//	    [--out FILE]
//
// It reads each group's start offsets from the source cluster
// (DescribeShareGroupOffsets), reads MirrorMaker's offset-syncs topic from
// its beginning, translates every start offset to the target the way
// MirrorMaker's checkpoint connector translates a consumer group's
// committed offset, and prints the CSV that Kafka 4.4's
// `kafka-share-groups.sh --reset-offsets --from-file` reads
// (topic,partition,offset, one group per file). With more than one group
// each group's rows go to FILE.GROUP.csv.

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/log"
)

// offsetSync is one record of MirrorMaker's offset-syncs topic: source
// record Upstream of Topic/Partition was written to the target at
// Downstream.
type offsetSync struct {
	Topic      string
	Partition  int32
	Upstream   int64
	Downstream int64
}

var errBadOffsetSync = errors.New("malformed offset sync record")

// decodeOffsetSync reads MirrorMaker's OffsetSync record: the key is
// {topic STRING, partition INT32} and the value {upstreamOffset INT64,
// offset INT64} in Kafka's protocol Struct encoding (a STRING is an int16
// length and that many UTF-8 bytes), as connect-mirror-client's OffsetSync
// serializes them.
func decodeOffsetSync(key, value []byte) (offsetSync, error) {
	if len(key) < 2 {
		return offsetSync{}, fmt.Errorf("%w: key of %d bytes", errBadOffsetSync, len(key))
	}
	n := int(int16(binary.BigEndian.Uint16(key)))
	if n < 0 || len(key) != 2+n+4 {
		return offsetSync{}, fmt.Errorf("%w: key of %d bytes with a topic of %d", errBadOffsetSync, len(key), n)
	}
	if len(value) != 16 {
		return offsetSync{}, fmt.Errorf("%w: value of %d bytes, want 16", errBadOffsetSync, len(value))
	}
	return offsetSync{
		Topic:      string(key[2 : 2+n]),
		Partition:  int32(binary.BigEndian.Uint32(key[2+n:])),
		Upstream:   int64(binary.BigEndian.Uint64(value)),
		Downstream: int64(binary.BigEndian.Uint64(value[8:])),
	}, nil
}

type topicPartition struct {
	Topic     string
	Partition int32
}

// syncIndex holds, per source partition, the offset syncs in the order
// MirrorMaker wrote them.
type syncIndex map[topicPartition][]offsetSync

func (ix syncIndex) add(s offsetSync) {
	tp := topicPartition{s.Topic, s.Partition}
	ix[tp] = append(ix[tp], s)
}

// translate maps a source offset (the next record a group would read) to
// the target as MirrorMaker's OffsetSyncStore does: the sync with the
// greatest upstream offset not past it (the later one on a tie: a restarted
// MirrorMaker re-mirrors from its last committed position) gives its
// downstream offset when the upstream offsets are equal and one more
// otherwise, because the records between two syncs sit somewhere after
// the earlier sync's downstream offset. Starting there can only redeliver
// records on the target, never skip one. ok is false when no sync is at or
// before upstream (the partition was not mirrored that far back).
func (ix syncIndex) translate(tp topicPartition, upstream int64) (int64, bool) {
	var best *offsetSync
	for i := range ix[tp] {
		s := &ix[tp][i]
		if s.Upstream <= upstream && (best == nil || s.Upstream >= best.Upstream) {
			best = s
		}
	}
	if best == nil {
		return 0, false
	}
	if best.Upstream == upstream {
		return best.Downstream, true
	}
	return best.Downstream + 1, true
}

// shareOffsetRow is one CSV row of kafka-share-groups.sh --from-file.
type shareOffsetRow struct {
	Topic     string
	Partition int32
	Offset    int64
}

// translateStartOffsets translates a group's start offsets; partitions
// without a usable sync are returned in missing, sorted.
func translateStartOffsets(ix syncIndex, start map[topicPartition]int64) (rows []shareOffsetRow, missing []string) {
	for tp, off := range start {
		d, ok := ix.translate(tp, off)
		if !ok {
			missing = append(missing, fmt.Sprintf("%s-%d (start offset %d)", tp.Topic, tp.Partition, off))
			continue
		}
		rows = append(rows, shareOffsetRow{tp.Topic, tp.Partition, d})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Topic != rows[j].Topic {
			return rows[i].Topic < rows[j].Topic
		}
		return rows[i].Partition < rows[j].Partition
	})
	sort.Strings(missing)
	return rows, missing
}

func writeShareCSV(w io.Writer, rows []shareOffsetRow) error {
	for _, r := range rows {
		if _, err := fmt.Fprintf(w, "%s,%d,%d\n", r.Topic, r.Partition, r.Offset); err != nil {
			return err
		}
	}
	return nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runMigrate(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "share-offsets" {
		fmt.Fprintln(stderr, "usage: sharq migrate share-offsets --source HOST:PORT --group G [flags] (see --help)")
		return 2
	}
	fs := flag.NewFlagSet("sharq migrate share-offsets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	source := fs.String("source", "", "bootstrap server of the source cluster the share groups live on (required)")
	var groups multiFlag
	fs.Var(&groups, "group", "share group to translate (repeatable; required)")
	syncsBootstrap := fs.String("offset-syncs-bootstrap", "", "cluster holding MirrorMaker's offset-syncs topic (default --source: offset-syncs.topic.location=source)")
	alias := fs.String("target-alias", "", "MirrorMaker's alias of the target cluster: the topic is mm2-offset-syncs.ALIAS.internal")
	topic := fs.String("offset-syncs-topic", "", "the offset-syncs topic's name (instead of --target-alias)")
	out := fs.String("out", "", "write the CSV to FILE (default stdout; with several groups FILE.GROUP.csv)")
	timeout := fs.Duration("timeout", time.Minute, "how long the whole read may take")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *source == "" || len(groups) == 0 || (*alias == "") == (*topic == "") || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "sharq migrate share-offsets: --source, at least one --group and exactly one of --target-alias or --offset-syncs-topic are required")
		fs.Usage()
		return 2
	}
	if *topic == "" {
		*topic = "mm2-offset-syncs." + *alias + ".internal"
	}
	if *syncsBootstrap == "" {
		*syncsBootstrap = *source
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	syncs, err := readOffsetSyncs(ctx, *syncsBootstrap, *topic)
	if err != nil {
		fmt.Fprintf(stderr, "sharq migrate share-offsets: read %s at %s: %v\n", *topic, *syncsBootstrap, err)
		return 1
	}
	code := 0
	for _, g := range groups {
		start, err := describeShareStartOffsets(ctx, *source, g)
		if err != nil {
			fmt.Fprintf(stderr, "sharq migrate share-offsets: group %s: %v\n", g, err)
			return 1
		}
		rows, missing := translateStartOffsets(syncs, start)
		for _, m := range missing {
			fmt.Fprintf(stderr, "sharq migrate share-offsets: group %s: no offset sync at or before %s in %s: not mirrored yet, or MirrorMaker sent no sync for its first records; left out: reset it on the target with kafka-share-groups.sh --reset-offsets --to-earliest (its records are delivered again)\n", g, m, *topic)
			code = 1
		}
		w := stdout
		if *out != "" {
			name := *out
			if len(groups) > 1 {
				name = *out + "." + g + ".csv"
			}
			f, err := os.Create(name)
			if err != nil {
				fmt.Fprintf(stderr, "sharq migrate share-offsets: %v\n", err)
				return 1
			}
			defer f.Close()
			w = f
		}
		if err := writeShareCSV(w, rows); err != nil {
			fmt.Fprintf(stderr, "sharq migrate share-offsets: write: %v\n", err)
			return 1
		}
	}
	return code
}

// kconn is one connection to a broker sending kmsg requests one at a time.
type kconn struct {
	c    net.Conn
	f    *kmsg.RequestFormatter
	corr int32
}

func dialKafka(ctx context.Context, addr string) (*kconn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	return &kconn{c: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("sharq-migrate"))}, nil
}

// do sends req at its set version and decodes the answer.
func (k *kconn) do(req kmsg.Request) (kmsg.Response, error) {
	k.corr++
	if _, err := k.c.Write(k.f.AppendRequest(nil, req, k.corr)); err != nil {
		return nil, fmt.Errorf("write %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(k.c, hdr[:]); err != nil {
		return nil, fmt.Errorf("read %s answer: %w", kmsg.NameForKey(req.Key()), err)
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size < 4 || size > 256<<20 {
		return nil, fmt.Errorf("%s answer of %d bytes", kmsg.NameForKey(req.Key()), size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(k.c, body); err != nil {
		return nil, fmt.Errorf("read %s answer: %w", kmsg.NameForKey(req.Key()), err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != k.corr {
		return nil, fmt.Errorf("%s answer with correlation id %d, want %d", kmsg.NameForKey(req.Key()), got, k.corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != 18 { // ApiVersions' header is never flexible
		if len(body) < 1 || body[0] != 0 {
			return nil, fmt.Errorf("%s answer: tagged fields in the header", kmsg.NameForKey(req.Key()))
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s answer: %w", kmsg.NameForKey(req.Key()), err)
	}
	return resp, nil
}

func (k *kconn) Close() error { return k.c.Close() }

// brokersOf returns the cluster's brokers by node id and, for topic (""
// for none), each partition's leader.
func brokersOf(ctx context.Context, bootstrap, topic string) (map[int32]string, map[int32]int32, error) {
	k, err := dialKafka(ctx, bootstrap)
	if err != nil {
		return nil, nil, err
	}
	defer k.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	req.Topics = []kmsg.MetadataRequestTopic{}
	if topic != "" {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, t)
	}
	r, err := k.do(req)
	if err != nil {
		return nil, nil, err
	}
	resp := r.(*kmsg.MetadataResponse)
	brokers := map[int32]string{}
	for _, b := range resp.Brokers {
		brokers[b.NodeID] = net.JoinHostPort(b.Host, fmt.Sprint(b.Port))
	}
	leaders := map[int32]int32{}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, nil, fmt.Errorf("topic %s: %w", topic, err)
		}
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, nil, fmt.Errorf("%s-%d: %w", topic, p.Partition, err)
			}
			leaders[p.Partition] = p.Leader
		}
	}
	return brokers, leaders, nil
}

// readOffsetSyncs reads every partition of the offset-syncs topic from its
// start to its current end.
func readOffsetSyncs(ctx context.Context, bootstrap, topic string) (syncIndex, error) {
	brokers, leaders, err := brokersOf(ctx, bootstrap, topic)
	if err != nil {
		return nil, err
	}
	ix := syncIndex{}
	for p, leader := range leaders {
		addr, ok := brokers[leader]
		if !ok {
			return nil, fmt.Errorf("%s-%d: leader %d not among the brokers", topic, p, leader)
		}
		if err := readPartitionSyncs(ctx, addr, topic, p, ix); err != nil {
			return nil, fmt.Errorf("%s-%d: %w", topic, p, err)
		}
	}
	return ix, nil
}

func readPartitionSyncs(ctx context.Context, addr, topic string, partition int32, ix syncIndex) error {
	k, err := dialKafka(ctx, addr)
	if err != nil {
		return err
	}
	defer k.Close()
	pos, err := listOffset(k, topic, partition, -2) // earliest
	if err != nil {
		return err
	}
	end, err := listOffset(k, topic, partition, -1) // latest
	if err != nil {
		return err
	}
	for pos < end {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12 // topic names (v13 switched to topic ids)
		req.ReplicaID = -1
		req.MaxWaitMillis = 500
		req.MaxBytes = 8 << 20
		req.SessionEpoch = -1 // no fetch session
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = topic
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = partition
		fp.FetchOffset = pos
		fp.PartitionMaxBytes = 8 << 20
		fp.CurrentLeaderEpoch = -1
		fp.LogStartOffset = -1
		ft.Partitions = []kmsg.FetchRequestTopicPartition{fp}
		req.Topics = []kmsg.FetchRequestTopic{ft}
		r, err := k.do(req)
		if err != nil {
			return err
		}
		resp := r.(*kmsg.FetchResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return fmt.Errorf("Fetch: %w", err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return errors.New("Fetch answer without the partition")
		}
		rp := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
			return fmt.Errorf("Fetch at %d: %w", pos, err)
		}
		next, err := eachBatchSync(rp.RecordBatches, pos, ix)
		if err != nil {
			return fmt.Errorf("at offset %d: %w", pos, err)
		}
		if next == pos {
			return fmt.Errorf("Fetch at %d returned no record before the end offset %d", pos, end)
		}
		pos = next
	}
	return nil
}

func listOffset(k *kconn, topic string, partition int32, ts int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 7
	req.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition = partition
	lp.Timestamp = ts
	lp.CurrentLeaderEpoch = -1
	lt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{lp}
	req.Topics = []kmsg.ListOffsetsRequestTopic{lt}
	r, err := k.do(req)
	if err != nil {
		return 0, err
	}
	resp := r.(*kmsg.ListOffsetsResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, errors.New("ListOffsets answer without the partition")
	}
	rp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
		return 0, fmt.Errorf("ListOffsets: %w", err)
	}
	return rp.Offset, nil
}

// maxSyncBatch bounds a decompressed batch: offset syncs are 30-odd bytes
// each and MirrorMaker's producer batches are 16 KiB by default.
const maxSyncBatch = 64 << 20

// eachBatchSync decodes the record batches of a Fetch answer (a partial
// batch at the end is left for the next fetch), adds every offset sync at
// or after from to ix, and returns the offset after the last whole batch.
func eachBatchSync(b []byte, from int64, ix syncIndex) (int64, error) {
	next := from
	for len(b) >= 12 {
		size := int(int32(binary.BigEndian.Uint32(b[8:])))
		if size < 49 || 12+size > len(b) {
			break // partial batch: Fetch cuts at its byte limit
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b[:12+size]); err != nil {
			return next, fmt.Errorf("record batch: %w", err)
		}
		b = b[12+size:]
		if rb.Magic != 2 {
			return next, fmt.Errorf("record batch of magic %d", rb.Magic)
		}
		last := rb.FirstOffset + int64(rb.LastOffsetDelta)
		if last < next {
			continue // before the fetch offset: the broker sends whole batches
		}
		if rb.Attributes&0x20 == 0 { // not a control batch
			recs := rb.Records
			if codec := int(rb.Attributes & 7); codec != 0 {
				var err error
				if recs, err = log.Decompress(nil, codec, recs, maxSyncBatch); err != nil {
					return next, fmt.Errorf("decompress batch at %d: %w", rb.FirstOffset, err)
				}
			}
			if err := eachRecord(recs, rb.NumRecords, func(delta int32, key, value []byte) error {
				if rb.FirstOffset+int64(delta) < from {
					return nil
				}
				s, err := decodeOffsetSync(key, value)
				if err != nil {
					return fmt.Errorf("offset %d: %w", rb.FirstOffset+int64(delta), err)
				}
				ix.add(s)
				return nil
			}); err != nil {
				return next, err
			}
		}
		next = last + 1
	}
	return next, nil
}

var errBadRecord = errors.New("malformed record")

// eachRecord walks count v2 records (length, attributes, timestamp delta,
// offset delta, key, value, headers; zig-zag varints) and calls fn with
// each one's offset delta, key and value.
func eachRecord(p []byte, count int32, fn func(delta int32, key, value []byte) error) error {
	for i := int32(0); i < count; i++ {
		n, w := binary.Varint(p)
		if w <= 0 || n < 0 || int64(len(p)-w) < n {
			return fmt.Errorf("%w: length", errBadRecord)
		}
		rec := p[w : w+int(n)]
		p = p[w+int(n):]
		if len(rec) < 1 {
			return fmt.Errorf("%w: empty", errBadRecord)
		}
		rec = rec[1:] // attributes
		var fields [2]int64
		for j := range fields { // timestamp delta, offset delta
			v, w := binary.Varint(rec)
			if w <= 0 {
				return fmt.Errorf("%w: varint", errBadRecord)
			}
			fields[j] = v
			rec = rec[w:]
		}
		var kv [2][]byte
		for j := range kv {
			l, w := binary.Varint(rec)
			if w <= 0 || l < -1 || int64(len(rec)-w) < l {
				return fmt.Errorf("%w: key or value", errBadRecord)
			}
			rec = rec[w:]
			if l >= 0 {
				kv[j] = rec[:l]
				rec = rec[l:]
			}
		}
		if fields[1] < 0 || fields[1] > 1<<31-1 {
			return fmt.Errorf("%w: offset delta %d", errBadRecord, fields[1])
		}
		if err := fn(int32(fields[1]), kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// describeShareStartOffsets asks group's coordinator for its start
// offsets on every topic it has state for.
func describeShareStartOffsets(ctx context.Context, bootstrap, group string) (map[topicPartition]int64, error) {
	k, err := dialKafka(ctx, bootstrap)
	if err != nil {
		return nil, err
	}
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version = 6
	// A share group lives on the group coordinator (type 0); type 2 is
	// the share-state coordinator, keyed by group:topicId:partition.
	fc.CoordinatorType = 0
	fc.CoordinatorKeys = []string{group}
	r, err := k.do(fc)
	k.Close()
	if err != nil {
		return nil, err
	}
	fcr := r.(*kmsg.FindCoordinatorResponse)
	if len(fcr.Coordinators) != 1 {
		return nil, errors.New("FindCoordinator answer without the group")
	}
	co := fcr.Coordinators[0]
	if err := kerr.ErrorForCode(co.ErrorCode); err != nil {
		return nil, fmt.Errorf("FindCoordinator: %w", err)
	}
	k, err = dialKafka(ctx, net.JoinHostPort(co.Host, fmt.Sprint(co.Port)))
	if err != nil {
		return nil, err
	}
	defer k.Close()
	req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	req.Version = 1
	g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	g.GroupID = group
	g.Topics = nil // every topic
	req.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{g}
	r, err = k.do(req)
	if err != nil {
		return nil, err
	}
	resp := r.(*kmsg.DescribeShareGroupOffsetsResponse)
	if len(resp.Groups) != 1 {
		return nil, errors.New("DescribeShareGroupOffsets answer without the group")
	}
	rg := resp.Groups[0]
	if err := kerr.ErrorForCode(rg.ErrorCode); err != nil {
		return nil, fmt.Errorf("DescribeShareGroupOffsets: %w", err)
	}
	out := map[topicPartition]int64{}
	for _, t := range rg.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("DescribeShareGroupOffsets %s-%d: %w", t.Topic, p.Partition, err)
			}
			if p.StartOffset < 0 {
				continue // no state yet: the target starts where share.auto.offset.reset says
			}
			out[topicPartition{t.Topic, p.Partition}] = p.StartOffset
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("share group %s has no start offsets on %s", group, bootstrap)
	}
	return out, nil
}
