package broker

// TxnOffsetCommit: v0-6
//
// Behavior:
// * Stages offsets in the group for the producer's transaction: they are
//   applied when the transaction commits and dropped when it aborts
//   (group.TxnCommitOffsets, durable). The committer is checked by Kafka
//   4.4's rules for transactional commits: one without member (v0-2 carry
//   none; v3+ generation -1, no member id, no instance id: what a producer
//   sends that knows only the group id) is accepted whatever the group's
//   members and state; one with a member gets UNKNOWN_MEMBER_ID,
//   FENCED_INSTANCE_ID, ILLEGAL_GENERATION as for OffsetCommit, but never
//   REBALANCE_IN_PROGRESS. A group that does not exist accepts only
//   generation < 0 (ILLEGAL_GENERATION otherwise); a share group's id is
//   GROUP_ID_NOT_FOUND.
// * The group must be in the producer's transaction: before v5 it was added
//   by AddOffsetsToTxn (INVALID_TXN_STATE if not, with
//   transaction.partition.verification.enable); v5+ (transaction version 2)
//   adds it implicitly. Producer errors come from the coordinator
//   (INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS).
// * Unknown partitions: UNKNOWN_TOPIC_OR_PARTITION.
// * ACLs: WRITE on the transactional id, READ on the group
//   (GROUP_AUTHORIZATION_FAILED) and on each topic
//   (TOPIC_AUTHORIZATION_FAILED).
//
// * v6 (KIP-1319): topics by id (an unknown id: UNKNOWN_TOPIC_ID); a
//   member's commit to a group that does not exist is GROUP_ID_NOT_FOUND
//   and a wrong consumer member epoch STALE_MEMBER_EPOCH, where earlier
//   versions answer ILLEGAL_GENERATION, as Kafka 4.4 does.
//
// Version notes:
// * v2: leader epoch; v3: flexible, member id, generation, instance id;
//   v5: implicit add (KIP-890); v6: topic ids, KIP-1319 errors.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
)

func init() { regKey(28, 0, 6, handleTxnOffsetCommit) }

func handleTxnOffsetCommit(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.TxnOffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	img := r.s.meta.Image()
	codes := make([][]int16, len(req.Topics))
	names := make([]string, len(req.Topics))
	cr := group.TxnCommitRequest{
		Group:         req.Group,
		ProducerID:    req.ProducerID,
		MemberID:      req.MemberID,
		InstanceID:    req.InstanceID,
		Generation:    req.Generation,
		Offsets:       map[group.TopicPartition]group.Offset{},
		KIP1319Errors: r.version >= 6,
	}
	// Kafka refuses the whole request first for the transactional id and
	// the group (every partition gets that error), then checks topics.
	var authCode int16
	switch {
	case !r.authorize(resTransactionalID, req.TransactionalID, opWrite):
		authCode = errTransactionalIDAuthFailed
	case !r.authorize(resGroup, req.Group, opRead):
		authCode = kerr.GroupAuthorizationFailed.Code
	}
	for i, t := range req.Topics {
		codes[i] = make([]int16, len(t.Partitions))
		if authCode != 0 {
			for j := range codes[i] {
				codes[i][j] = authCode
			}
			continue
		}
		name := t.Topic
		if r.version >= 6 {
			name = topicNameByID(img, t.TopicID)
		}
		names[i] = name
		readable := name == "" || r.authorize(resTopic, name, opRead)
		for j, p := range t.Partitions {
			if !readable {
				codes[i][j] = kerr.TopicAuthorizationFailed.Code
				continue
			}
			if name == "" && r.version >= 6 {
				codes[i][j] = errUnknownTopicID
				continue
			}
			if !partitionExists(img, name, p.Partition) {
				codes[i][j] = errUnknownTopicOrPartition
				continue
			}
			epoch := p.LeaderEpoch
			if r.version < 2 {
				epoch = -1
			}
			cr.Offsets[group.TopicPartition{Topic: name, Partition: p.Partition}] = group.Offset{Offset: p.Offset, LeaderEpoch: epoch, Metadata: strOr(p.Metadata)}
		}
	}
	// Kafka checks the transaction first (the coordinator answers for the
	// producer), then the group.
	var gcode int16
	tc := r.s.coord.txn
	switch {
	case authCode != 0:
		gcode = authCode
	case req.Group == "":
		gcode = kerr.InvalidGroupID.Code
	case r.version >= 5:
		gcode = txnErrorCode(r, tc.AddGroup(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group, true), 3)
	case r.s.effectiveConfig().TransactionPartitionVerificationEnable:
		gcode = txnErrorCode(r, tc.VerifyGroup(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group), 3)
	}
	var perr map[group.TopicPartition]error
	if gcode == 0 && len(cr.Offsets) > 0 {
		var gerr error
		perr, gerr = r.s.coord.groups.TxnCommitOffsets(cr)
		if gerr != nil {
			if group.ErrorCode(gerr) == kerr.UnknownServerError.Code {
				r.s.logger.Error("transactional offset commit", "group", req.Group, "err", gerr)
				gcode = kerr.CoordinatorNotAvailable.Code
			} else {
				gcode, _ = groupError(gerr)
			}
		}
	}
	for i, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for j, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = codes[i][j]
			if rp.ErrorCode == 0 {
				if gcode != 0 {
					rp.ErrorCode = gcode
				} else if e := perr[group.TopicPartition{Topic: names[i], Partition: p.Partition}]; e != nil {
					rp.ErrorCode, _ = groupError(e)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
