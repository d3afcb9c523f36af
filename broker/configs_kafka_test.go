package broker_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
)

// TestBrokerConfigRefusalsAsKafka: what Kafka 4.4 answered in the interop
// golden run. A read-only broker key is INVALID_REQUEST "Cannot update
// these configs dynamically: [log.dirs]"; an unknown broker key is stored
// (and can be deleted) and the broker keeps running; describe shows
// broker.id as the node id and the bound listener port.
func TestBrokerConfigRefusalsAsKafka(t *testing.T) {
	t.Parallel()
	b := brokertest.New(t)
	ctx := testCtx(t)
	cl := newClient(t, b)
	alter := func(op kmsg.IncrementalAlterConfigOp, name, value string) (int16, string) {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op = name, op
		if op == kmsg.IncrementalAlterConfigOpSet {
			c.Value = &value
		}
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		msg := ""
		if m := resp.Resources[0].ErrorMessage; m != nil {
			msg = *m
		}
		return resp.Resources[0].ErrorCode, msg
	}
	if code, msg := alter(kmsg.IncrementalAlterConfigOpSet, "log.dirs", "/elsewhere"); code != kerr.InvalidRequest.Code || msg != "Cannot update these configs dynamically: [log.dirs]" {
		t.Errorf("read-only key: %d %q", code, msg)
	}
	if code, msg := alter(kmsg.IncrementalAlterConfigOpSet, "plugin.unknown.key", "1"); code != 0 {
		t.Errorf("unknown key set: %d %q", code, msg)
	}
	if code, msg := alter(kmsg.IncrementalAlterConfigOpSet, "log.retention.ms", "100000"); code != 0 {
		t.Errorf("a known key beside a stored unknown one: %d %q", code, msg)
	}
	if code, msg := alter(kmsg.IncrementalAlterConfigOpDelete, "plugin.unknown.key", ""); code != 0 {
		t.Errorf("unknown key delete: %d %q", code, msg)
	}

	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	res.ConfigNames = []string{"broker.id", "listeners"}
	req.Resources = append(req.Resources, res)
	req.IncludeSynonyms = true
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Resources[0].Configs) != 2 {
		t.Fatalf("describe broker.id and listeners: %+v", resp.Resources[0])
	}
	for _, c := range resp.Resources[0].Configs {
		switch c.Name {
		case "broker.id":
			if c.Value == nil || *c.Value != "1" || c.Source != kmsg.ConfigSourceStaticBrokerConfig || len(c.ConfigSynonyms) != 2 {
				t.Errorf("broker.id: %+v", c)
			}
		case "listeners":
			if c.Value == nil || *c.Value != "PLAINTEXT://"+b.Addr {
				t.Errorf("listeners %v, want PLAINTEXT://%s", *c.Value, b.Addr)
			}
		}
	}
}
