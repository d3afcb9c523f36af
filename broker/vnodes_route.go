package broker

// Coordinator routing for virtual brokers: a group or transaction API sent
// to a node that does not coordinate its key is answered NOT_COORDINATOR
// without running the handler, as a Kafka broker answers for a
// __consumer_offsets / __transaction_state partition it does not lead.
// Batched APIs (DescribeGroups, OffsetFetch v8+, ...) answer the keys this
// node coordinates for real and the others NOT_COORDINATOR; ListGroups and
// ListTransactions list only this node's, as each Kafka broker lists its
// own. Partition-leader checks live in the handlers (notLeader), where
// Kafka makes them. Only reached with sharq.virtual.brokers > 1.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var errNotCoordinator = kerr.NotCoordinator.Code

// handleVirtual runs api's handler for a request that arrived on node
// r.c.node, routing it as above.
func (s *Server) handleVirtual(r *request, api *apiEntry, req kmsg.Request) (kmsg.Response, error) {
	if r.c == nil {
		return api.handle(r, req)
	}
	not := func(kind coordinatorTopic, key string) bool { return r.notCoordinator(kind, key) }
	notGroup := func(g string) bool { return not(groupCoordinator, g) }
	notTxn := func(id string) bool { return not(txnCoordinator, id) }
	answer := func() kmsg.Response { return req.ResponseKind() }
	switch q := req.(type) {
	case *kmsg.OffsetCommitRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.OffsetCommitResponse)
			for _, t := range q.Topics {
				rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
				for _, p := range t.Partitions {
					rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: errNotCoordinator})
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		}
	case *kmsg.TxnOffsetCommitRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.TxnOffsetCommitResponse)
			for _, t := range q.Topics {
				rt := kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic}
				for _, p := range t.Partitions {
					rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: errNotCoordinator})
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		}
	case *kmsg.OffsetFetchRequest:
		if r.version < 8 {
			if notGroup(q.Group) {
				resp := answer().(*kmsg.OffsetFetchResponse)
				resp.ErrorCode = errNotCoordinator
				for _, t := range q.Topics {
					rt := kmsg.OffsetFetchResponseTopic{Topic: t.Topic}
					for _, p := range t.Partitions {
						rt.Partitions = append(rt.Partitions, kmsg.OffsetFetchResponseTopicPartition{Partition: p, Offset: -1, LeaderEpoch: -1, ErrorCode: errNotCoordinator})
					}
					resp.Topics = append(resp.Topics, rt)
				}
				return resp, nil
			}
			break
		}
		others := splitBy(&q.Groups, func(g kmsg.OffsetFetchRequestGroup) string { return g.Group }, notGroup)
		return withOthers(r, api, req, others, func(resp kmsg.Response, g string) {
			rr := resp.(*kmsg.OffsetFetchResponse)
			rr.Groups = append(rr.Groups, kmsg.OffsetFetchResponseGroup{Group: g, ErrorCode: errNotCoordinator})
		})
	case *kmsg.JoinGroupRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.JoinGroupResponse)
			resp.ErrorCode, resp.Generation = errNotCoordinator, -1
			return resp, nil
		}
	case *kmsg.HeartbeatRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.HeartbeatResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.LeaveGroupRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.LeaveGroupResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.SyncGroupRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.SyncGroupResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.OffsetDeleteRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.OffsetDeleteResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.ConsumerGroupHeartbeatRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.ConsumerGroupHeartbeatResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.ShareGroupHeartbeatRequest:
		if notGroup(q.GroupID) {
			resp := answer().(*kmsg.ShareGroupHeartbeatResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.StreamsGroupHeartbeatRequest:
		if notGroup(q.Group) {
			resp := answer().(*kmsg.StreamsGroupHeartbeatResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.AlterShareGroupOffsetsRequest:
		if notGroup(q.GroupID) {
			resp := answer().(*kmsg.AlterShareGroupOffsetsResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.DeleteShareGroupOffsetsRequest:
		if notGroup(q.GroupID) {
			resp := answer().(*kmsg.DeleteShareGroupOffsetsResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.DescribeGroupsRequest:
		others := splitKeys(&q.Groups, notGroup)
		return withOthers(r, api, req, others, func(resp kmsg.Response, g string) {
			rr := resp.(*kmsg.DescribeGroupsResponse)
			rr.Groups = append(rr.Groups, kmsg.DescribeGroupsResponseGroup{Group: g, ErrorCode: errNotCoordinator, AuthorizedOperations: authorizedOperationsNotRequested})
		})
	case *kmsg.DeleteGroupsRequest:
		others := splitKeys(&q.Groups, notGroup)
		return withOthers(r, api, req, others, func(resp kmsg.Response, g string) {
			rr := resp.(*kmsg.DeleteGroupsResponse)
			rr.Groups = append(rr.Groups, kmsg.DeleteGroupsResponseGroup{Group: g, ErrorCode: errNotCoordinator})
		})
	case *kmsg.ConsumerGroupDescribeRequest:
		others := splitKeys(&q.Groups, notGroup)
		return withOthers(r, api, req, others, func(resp kmsg.Response, g string) {
			rr := resp.(*kmsg.ConsumerGroupDescribeResponse)
			rr.Groups = append(rr.Groups, kmsg.ConsumerGroupDescribeResponseGroup{Group: g, ErrorCode: errNotCoordinator, AuthorizedOperations: authorizedOperationsNotRequested})
		})
	case *kmsg.ShareGroupDescribeRequest:
		others := splitKeys(&q.GroupIDs, notGroup)
		return withOthers(r, api, req, others, func(resp kmsg.Response, g string) {
			rr := resp.(*kmsg.ShareGroupDescribeResponse)
			rr.Groups = append(rr.Groups, kmsg.ShareGroupDescribeResponseGroup{GroupID: g, ErrorCode: errNotCoordinator, AuthorizedOperations: authorizedOperationsNotRequested})
		})
	case *kmsg.StreamsGroupDescribeRequest:
		others := splitKeys(&q.Groups, notGroup)
		return withOthers(r, api, req, others, func(resp kmsg.Response, g string) {
			rr := resp.(*kmsg.StreamsGroupDescribeResponse)
			rr.Groups = append(rr.Groups, kmsg.StreamsGroupDescribeResponseGroup{Group: g, ErrorCode: errNotCoordinator, AuthorizedOperations: authorizedOperationsNotRequested})
		})
	case *kmsg.DescribeShareGroupOffsetsRequest:
		others := splitBy(&q.Groups, func(g kmsg.DescribeShareGroupOffsetsRequestGroup) string { return g.GroupID }, notGroup)
		return withOthers(r, api, req, others, func(resp kmsg.Response, g string) {
			rr := resp.(*kmsg.DescribeShareGroupOffsetsResponse)
			rr.Groups = append(rr.Groups, kmsg.DescribeShareGroupOffsetsResponseGroup{GroupID: g, ErrorCode: errNotCoordinator})
		})
	case *kmsg.ListGroupsRequest:
		resp, err := api.handle(r, req)
		if rr, ok := resp.(*kmsg.ListGroupsResponse); ok && err == nil {
			rr.Groups = slices.DeleteFunc(rr.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return notGroup(g.Group) })
		}
		return resp, err

	case *kmsg.InitProducerIDRequest:
		if q.TransactionalID != nil && *q.TransactionalID != "" && notTxn(*q.TransactionalID) {
			resp := answer().(*kmsg.InitProducerIDResponse)
			resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = errNotCoordinator, -1, -1
			return resp, nil
		}
	case *kmsg.AddPartitionsToTxnRequest:
		if r.version < 4 {
			if notTxn(q.TransactionalID) {
				resp := answer().(*kmsg.AddPartitionsToTxnResponse)
				for _, t := range q.Topics {
					rt := kmsg.AddPartitionsToTxnResponseTopic{Topic: t.Topic}
					for _, p := range t.Partitions {
						rt.Partitions = append(rt.Partitions, kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: p, ErrorCode: errNotCoordinator})
					}
					resp.Topics = append(resp.Topics, rt)
				}
				return resp, nil
			}
			break
		}
		for _, t := range q.Transactions {
			if notTxn(t.TransactionalID) {
				// Batched by the brokers' partition leaders; one
				// coordinator per request, as Kafka's sender batches.
				resp := answer().(*kmsg.AddPartitionsToTxnResponse)
				resp.ErrorCode = errNotCoordinator
				return resp, nil
			}
		}
	case *kmsg.AddOffsetsToTxnRequest:
		if notTxn(q.TransactionalID) {
			resp := answer().(*kmsg.AddOffsetsToTxnResponse)
			resp.ErrorCode = errNotCoordinator
			return resp, nil
		}
	case *kmsg.EndTxnRequest:
		if notTxn(q.TransactionalID) {
			resp := answer().(*kmsg.EndTxnResponse)
			resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = errNotCoordinator, -1, -1
			return resp, nil
		}
	case *kmsg.DescribeTransactionsRequest:
		others := splitKeys(&q.TransactionalIDs, notTxn)
		return withOthers(r, api, req, others, func(resp kmsg.Response, id string) {
			rr := resp.(*kmsg.DescribeTransactionsResponse)
			rr.TransactionStates = append(rr.TransactionStates, kmsg.DescribeTransactionsResponseTransactionState{TransactionalID: id, ErrorCode: errNotCoordinator, ProducerID: -1, ProducerEpoch: -1, StartTimestamp: -1})
		})
	case *kmsg.ListTransactionsRequest:
		resp, err := api.handle(r, req)
		if rr, ok := resp.(*kmsg.ListTransactionsResponse); ok && err == nil {
			rr.TransactionStates = slices.DeleteFunc(rr.TransactionStates, func(t kmsg.ListTransactionsResponseTransactionState) bool {
				return notTxn(t.TransactionalID)
			})
		}
		return resp, err
	}
	return api.handle(r, req)
}

// splitKeys removes the keys not coordinated here from *keys and returns
// them.
func splitKeys(keys *[]string, not func(string) bool) []string {
	return splitBy(keys, func(k string) string { return k }, not)
}

// splitBy removes from items those whose key another node coordinates and
// returns those keys.
func splitBy[T any](items *[]T, key func(T) string, not func(string) bool) []string {
	var others []string
	*items = slices.DeleteFunc(*items, func(it T) bool {
		if k := key(it); not(k) {
			others = append(others, k)
			return true
		}
		return false
	})
	return others
}

// withOthers runs the handler on the keys coordinated here (if any) and
// adds a NOT_COORDINATOR entry for each of the others.
func withOthers(r *request, api *apiEntry, req kmsg.Request, others []string, add func(kmsg.Response, string)) (kmsg.Response, error) {
	resp, err := api.handle(r, req)
	if err != nil || resp == nil {
		return resp, err
	}
	for _, k := range others {
		add(resp, k)
	}
	return resp, nil
}
