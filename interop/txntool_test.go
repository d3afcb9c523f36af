package interop

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClassTransactions is kafka-transactions.sh.
const ClassTransactions = "org.apache.kafka.tools.TransactionsCommand"

// scenarioTxnTool drives kafka-transactions.sh against a transaction left
// open by a franz-go producer: list, describe, describe-producers,
// find-hanging, then abort (WriteTxnMarkers to the partition) after which
// read_committed reaches the end of the partition. Producer ids, epochs and
// durations are masked; the rest must match Kafka byte for byte.
func scenarioTxnTool(t *testing.T, tg Target) {
	const topic, id = "interop-txn-tool", "interop-txn-tool-id"
	mustTool(t, tg, "txn-tool/create", "", ClassTopics,
		args(tg, "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := kgo.NewClient(kgo.SeedBrokers(tg.Bootstrap), kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic),
		kgo.TransactionTimeout(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"t-0", "t-1"} {
		if err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	dreq := kmsg.NewPtrDescribeTransactionsRequest()
	dreq.TransactionalIDs = []string{id}
	dresp, err := dreq.RequestWith(ctx, p)
	if err != nil || len(dresp.TransactionStates) != 1 || dresp.TransactionStates[0].ErrorCode != 0 {
		t.Fatalf("describe transactions: %v %+v", err, dresp)
	}
	st := dresp.TransactionStates[0]
	pid, epoch := strconv.FormatInt(st.ProducerID, 10), strconv.Itoa(int(st.ProducerEpoch))
	// Producer ids, epochs, node ids and times differ between targets:
	// record the other columns, and these as placeholders.
	masked := map[string]string{"ProducerId": "<PID>", "ProducerEpoch": "<EPOCH>", "Coordinator": "<NODE>", "CoordinatorId": "<NODE>",
		"LastTimestamp": "<MS>", "TransactionDurationMs": "<MS>", "CurrentTransactionStartTimeMs": "<MS>"}
	record := func(step string, exit int, m map[string]string, cols ...string) {
		var b strings.Builder
		fmt.Fprintf(&b, "exit %d\n", exit)
		for _, c := range cols {
			v := m[c]
			if r, ok := masked[c]; ok && v != "" {
				v = r
			}
			fmt.Fprintf(&b, "%s=%s\n", c, v)
		}
		if r := recorder(t); r != nil {
			if err := r.Record(tg.Name, step, b.String()); err != nil {
				t.Error(err)
			}
		}
	}
	row := func(out string) map[string]string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) < 2 {
			return nil
		}
		v := strings.Split(lines[1], "\t")
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, id) {
				v = strings.Split(l, "\t")
			}
		}
		h := strings.Split(lines[0], "\t")
		m := map[string]string{}
		for i := range h {
			if i < len(v) {
				m[strings.TrimSpace(h[i])] = strings.TrimSpace(v[i])
			}
		}
		return m
	}

	res := mustTool(t, tg, "", "", ClassTransactions, args(tg, "list")...)
	l := row(res.Stdout)
	if l["TransactionalId"] != id || l["TransactionState"] != "Ongoing" || l["ProducerId"] != pid {
		t.Errorf("list: %v\n%s", l, res.Stdout)
	}
	record("txn-tool/list", res.ExitCode, l, "TransactionalId", "Coordinator", "ProducerId", "TransactionState")

	res = mustTool(t, tg, "", "", ClassTransactions, args(tg, "describe", "--transactional-id", id)...)
	d := row(res.Stdout)
	if d["TransactionState"] != "Ongoing" || d["ProducerId"] != pid || d["ProducerEpoch"] != epoch || d["TopicPartitions"] != topic+"-0" {
		t.Errorf("describe: %v\n%s", d, res.Stdout)
	}
	record("txn-tool/describe", res.ExitCode, d, "CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
		"TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions")

	res = mustTool(t, tg, "", "", ClassTransactions, args(tg, "describe-producers", "--topic", topic, "--partition", "0")...)
	dp := row(res.Stdout)
	if dp["ProducerId"] != pid || dp["CurrentTransactionStartOffset"] != "0" || dp["LastSequence"] != "1" {
		t.Errorf("describe-producers: %v\n%s", dp, res.Stdout)
	}
	producerCols := []string{"ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp", "CurrentTransactionStartOffset"}
	record("txn-tool/describe-producers", res.ExitCode, dp, producerCols...)

	res = mustTool(t, tg, "txn-tool/find-hanging", "", ClassTransactions, args(tg, "find-hanging", "--broker-id", strconv.Itoa(int(tg.BrokerID)))...)
	if strings.Contains(res.Stdout, id) {
		t.Errorf("find-hanging lists a fresh transaction:\n%s", res.Stdout)
	}

	res = mustTool(t, tg, "txn-tool/abort", "", ClassTransactions, args(tg, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0")...)

	// The partition has no open transaction any more: the LSO is the end.
	lreq := kmsg.NewPtrListOffsetsRequest()
	lreq.IsolationLevel = 1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Timestamp = -1
	lt.Partitions = append(lt.Partitions, lp)
	lreq.Topics = append(lreq.Topics, lt)
	lresp, err := lreq.RequestWith(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := lresp.Topics[0].Partitions[0].Offset; got != 3 {
		t.Errorf("read_committed latest offset after abort = %d, want 3 (two records and the marker)", got)
	}
	res = mustTool(t, tg, "", "", ClassTransactions, args(tg, "describe-producers", "--topic", topic, "--partition", "0")...)
	dp = row(res.Stdout)
	if dp["CurrentTransactionStartOffset"] != "None" && dp["CurrentTransactionStartOffset"] != "-1" {
		t.Errorf("describe-producers after abort: %v", dp)
	}
	record("txn-tool/describe-producers-after-abort", res.ExitCode, dp, producerCols...)
	if err := p.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Logf("end the aborted transaction: %v", err)
	}
}
