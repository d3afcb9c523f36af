package broker

// DescribeTransactions: v0
//
// Behavior:
// * The state of each transactional id (txn.Describe): state name,
//   producer id and epoch, timeout, start time (-1 if none) and the
//   partitions of the open transaction. Groups in the transaction are shown
//   as Kafka shows them, as their __consumer_offsets partition
//   (abs(hashCode(group)) % 50). Unknown id: TRANSACTIONAL_ID_NOT_FOUND;
//   empty id: INVALID_REQUEST.
// * ACLs: DESCRIBE on the transactional id
//   (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); topics the caller may not
//   describe are left out.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/txn"
)

func init() { regKey(65, 0, 0, handleDescribeTransactions) }

// offsetsTopicPartitions is Kafka's offsets.topic.num.partitions default.
const offsetsTopicPartitions = 50

// groupOffsetsPartition is Kafka's GroupCoordinator.partitionFor: the
// __consumer_offsets partition of a group, from Java's String.hashCode.
func groupOffsetsPartition(group string) int32 {
	return javaHashPartition(group, offsetsTopicPartitions)
}

func handleDescribeTransactions(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeTransactionsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID = id
		if !r.authorize(resTransactionalID, id, opDescribe) {
			st.ErrorCode = errTransactionalIDAuthFailed
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		d, err := r.s.coord.txn.Describe(id)
		if err != nil {
			st.ErrorCode = txnErrorCode(r, err, 0)
			resp.TransactionStates = append(resp.TransactionStates, st)
			continue
		}
		m := d.Metadata
		st.State, st.TimeoutMillis, st.StartTimestamp = m.State.String(), m.TimeoutMs, m.StartMs
		st.ProducerID, st.ProducerEpoch = m.ProducerID, m.Epoch
		parts := append([]txn.TopicPartition(nil), m.Partitions...)
		for _, g := range m.Groups {
			parts = append(parts, txn.TopicPartition{Topic: "__consumer_offsets", Partition: groupOffsetsPartition(g)})
		}
		byTopic := map[string][]int32{}
		var topics []string
		for _, tp := range parts {
			if _, ok := byTopic[tp.Topic]; !ok {
				topics = append(topics, tp.Topic)
			}
			byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
		}
		sort.Strings(topics)
		for _, t := range topics {
			if !r.authorize(resTopic, t, opDescribe) {
				continue // Kafka leaves out topics the caller may not describe
			}
			ps := byTopic[t]
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			st.Topics = append(st.Topics, kmsg.DescribeTransactionsResponseTransactionStateTopic{Topic: t, Partitions: ps})
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}
