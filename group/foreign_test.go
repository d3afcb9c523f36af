package group

import (
	"context"
	"testing"
	"time"
)

// TestForeignGroupIDs: an id a share group holds is refused by every API
// that would otherwise create or read a classic or consumer group of that
// name (Kafka's codes and messages), and no second group appears; an id of
// our own keeps working even when the other side claims it too.
func TestForeignGroupIDs(t *testing.T) {
	c, _ := newTestCoordinator(t)
	// "own" becomes a consumer group before the share side claims it.
	if r := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "own", MemberID: "m", SubscribedTopicNames: []string{"t"}, RebalanceTimeout: time.Minute}); r.Err != nil {
		t.Fatalf("own heartbeat: %v", r.Err)
	}
	foreign := map[string]bool{"s": true, "own": true}
	c.SetForeignGroups(func(id string) bool { return foreign[id] })

	const notConsumer = "Group s is not a consumer group."
	tp := TopicPartition{"t", 0}
	cases := []struct {
		name    string
		call    func(group string) error
		code    int16
		message string
	}{
		{"ConsumerGroupHeartbeat", func(g string) error {
			return c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: g, MemberID: "m2", SubscribedTopicNames: []string{"t"}, RebalanceTimeout: time.Minute}).Err
		}, 69, notConsumer},
		{"JoinGroup", func(g string) error {
			req := joinReq("")
			req.Group, req.RequireKnownMemberID = g, false
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			r := c.JoinGroup(ctx, req)
			if r.Err != nil && r.MemberID != "" {
				t.Errorf("JoinGroup %s: member id %q with error %v", g, r.MemberID, r.Err)
			}
			return r.Err
		}, 23, ""},
		{"OffsetCommit", func(g string) error {
			_, err := c.CommitOffsets(CommitRequest{Group: g, Generation: -1, Offsets: map[TopicPartition]Offset{tp: {Offset: 1}}})
			return err
		}, 69, notConsumer},
		{"OffsetFetch", func(g string) error {
			_, err := c.FetchOffsets(g, "", -1, []TopicPartition{tp}, false)
			return err
		}, 69, notConsumer},
		{"OffsetDelete", func(g string) error {
			_, err := c.DeleteOffsets(g, []TopicPartition{tp})
			return err
		}, 69, notConsumer},
	}
	for _, tc := range cases {
		err := tc.call("s")
		if got := ErrorCode(err); got != tc.code {
			t.Errorf("%s on a share group's id: code %d (%v), want %d", tc.name, got, err, tc.code)
		}
		if tc.message != "" && (err == nil || err.Error() != tc.message) {
			t.Errorf("%s: message %v, want %q", tc.name, err, tc.message)
		}
	}
	if c.Exists("s") {
		t.Error("a classic or consumer group named s was created next to the share group")
	}
	// Our own group under a claimed id still answers as itself.
	if r := c.ConsumerHeartbeat(ConsumerHeartbeatRequest{Group: "own", MemberID: "m", MemberEpoch: 2, RebalanceTimeout: -1}); r.Err != nil {
		t.Errorf("own group heartbeat: %v", r.Err)
	}
	if _, err := c.FetchOffsets("own", "", -1, []TopicPartition{tp}, false); err != nil {
		t.Errorf("own group fetch: %v", err)
	}
}
