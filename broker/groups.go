package broker

// Helpers shared by the group API handlers (10-16, 42, 8, 9, 47, 68, 69).

import (
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/group"
	"sharq/raftmeta"
)

// groupError maps a group coordinator error to its code and the message to
// send (nil = none; the client prints its default text).
func groupError(err error) (int16, *string) {
	if err == nil {
		return 0, nil
	}
	code := group.ErrorCode(err)
	if msg := group.Message(err); msg != "" {
		return code, &msg
	}
	return code, nil
}

// clientHost is how Kafka shows a member's address: "/" + IP.
func (r *request) clientHost() string {
	if r.c == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(r.c.nc.RemoteAddr().String())
	if err != nil {
		return "/" + r.c.nc.RemoteAddr().String()
	}
	return "/" + host
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// partitionExists reports whether a topic has the partition.
func partitionExists(img *raftmeta.Image, topic string, p int32) bool {
	t := img.Topics[topic]
	return t != nil && p >= 0 && int(p) < len(t.Partitions)
}

// topicNameByID resolves a topic id; "" if unknown.
func topicNameByID(img *raftmeta.Image, id [16]byte) string {
	if t := img.TopicsByID[raftmeta.UUID(id)]; t != nil && id != ([16]byte{}) {
		return t.Name
	}
	return ""
}

// consumerSubscribedTopics parses the topics out of a "consumer" protocol
// subscription (ConsumerProtocolSubscription); nil if it does not decode.
func consumerSubscribedTopics(metadata []byte) []string {
	var m kmsg.ConsumerMemberMetadata
	if err := m.ReadFrom(metadata); err != nil {
		return nil
	}
	return m.Topics
}
