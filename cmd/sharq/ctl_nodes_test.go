package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestCtlNodes drives a 3-node virtual cluster's moves and outages with
// sharq ctl and checks what a client's metadata says after each.
func TestCtlNodes(t *testing.T) {
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.MetricsListener = "127.0.0.1:0"
		c.VirtualBrokers = 3
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, -1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	ctl := func(wantRC int, args ...string) []byte {
		t.Helper()
		var out, errb bytes.Buffer
		if rc := run(append([]string{"ctl", "--addr", "http://" + b.Server.AdminAddr()}, args...), []string{}, &out, &errb, nil); rc != wantRC {
			t.Fatalf("sharq ctl %s: rc %d, want %d: %s%s", strings.Join(args, " "), rc, wantRC, out.String(), errb.String())
		}
		return out.Bytes()
	}
	leaders := func() map[int32]int32 {
		t.Helper()
		// Straight to node 1: kgo answers a Metadata request from its
		// cache when it is fresh.
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("t")
		req.Topics = append(req.Topics, rt)
		resp, err := cl.Broker(1).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int32]int32{}
		for _, p := range resp.(*kmsg.MetadataResponse).Topics[0].Partitions {
			out[p.Partition] = p.Leader
		}
		return out
	}

	var stop struct {
		NodeID       int32 `json:"node_id"`
		LeadersMoved []struct {
			Topic       string `json:"topic"`
			Partition   int32  `json:"partition"`
			Leader      int32  `json:"leader"`
			LeaderEpoch int32  `json:"leader_epoch"`
		} `json:"leaders_moved"`
	}
	if err := json.Unmarshal(ctl(0, "node", "stop", "2"), &stop); err != nil {
		t.Fatal(err)
	}
	moved := false
	for _, m := range stop.LeadersMoved {
		if m.Topic == "t" && m.Partition == 1 && m.Leader == 3 && m.LeaderEpoch == 1 {
			moved = true
		}
	}
	if !moved {
		t.Fatalf("stop node 2 moved %+v, want t-1 to node 3 at epoch 1", stop.LeadersMoved)
	}
	if l := leaders(); l[1] != 3 {
		t.Fatalf("leaders after stopping node 2: %v", l)
	}
	metrics := func(want ...string) {
		t.Helper()
		resp, err := http.Get("http://" + b.Server.AdminAddr() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, w := range want {
			if !strings.Contains(string(body), "\n"+w+"\n") {
				t.Errorf("/metrics lacks %q", w)
			}
		}
	}
	metrics(`sharq_virtual_broker_up{node="2"} 0`, `sharq_virtual_broker_up{node="3"} 1`, `sharq_virtual_broker_moves_total{kind="node_stop"} 1`)
	var nodes []struct {
		NodeID int32 `json:"node_id"`
		Up     bool  `json:"up"`
	}
	if err := json.Unmarshal(ctl(0, "node", "list"), &nodes); err != nil || len(nodes) != 3 || nodes[1].Up || !nodes[0].Up {
		t.Fatalf("node list: %+v %v", nodes, err)
	}
	ctl(1, "leader", "move", "t", "0", "2") // a stopped node cannot lead
	ctl(0, "node", "start", "2")
	ctl(0, "leader", "move", "t", "1", "2")
	if l := leaders(); l[1] != 2 {
		t.Fatalf("leaders after moving t-1 back: %v", l)
	}
	var co struct {
		Topic  string `json:"topic"`
		Leader int32  `json:"leader"`
	}
	if err := json.Unmarshal(ctl(0, "coordinator", "move", "group", "g1", "3"), &co); err != nil || co.Topic != "__consumer_offsets" || co.Leader != 3 {
		t.Fatalf("coordinator move: %+v %v", co, err)
	}
	if got := b.Server.CoordinatorOf("group", "g1"); got != 3 {
		t.Fatalf("g1's coordinator is %d", got)
	}
	metrics(`sharq_virtual_broker_up{node="2"} 1`, `sharq_virtual_broker_moves_total{kind="node_start"} 1`,
		`sharq_virtual_broker_moves_total{kind="leader"} 2`, `sharq_virtual_broker_moves_total{kind="coordinator"} 1`)
	ctl(1, "node", "stop", "9")
	ctl(1, "leader", "move", "nope", "0", "1")
	ctl(2, "leader", "move", "t", "x", "1")
	ctl(2, "coordinator", "move", "queue", "k", "1")
	ctl(2, "node", "stop")
}
