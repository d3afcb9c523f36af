package broker_test

import (
	"bytes"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// TestUIShareExtensions renders /ui for a key-ordered share group with a
// redelivery backoff in headless Chromium: keys a b c a b c a b in one
// batch, a member acquired 0-2 (one record per key), accepted 0 and
// released 1. So 1 waits out its backoff ("Backoff", light blue), 3 (a)
// may go now, and 4-7 wait for keys b and c held or queued ("KeyHeld", dark
// blue). With -update the screenshot is docs/ui-share-extensions.png.
func TestUIShareExtensions(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	const lockMs = 600_000
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.MetricsListener = "127.0.0.1:0"
		c.GroupShareMaxRecordLockDurationMs, c.GroupShareRecordLockDurationMs = lockMs, lockMs
		c.GroupShareMaxSessionTimeoutMs, c.GroupShareSessionTimeoutMs = lockMs, lockMs
	}))
	const topic, group = "orders", "keyed-workers"
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, topic, 1, nil)
	setGroupConfig(t, b, group, "sharq.share.key.ordered.enable", "true")
	setGroupConfig(t, b, group, "sharq.share.redelivery.backoff.ms", "600000")
	setGroupConfig(t, b, group, "sharq.share.redelivery.backoff.max.ms", "600000")
	producer := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(50*time.Millisecond))
	ctx := testCtx(t)
	for _, k := range []string{"a", "b", "c", "a", "b", "c", "a", "b"} {
		producer.Produce(ctx, &kgo.Record{Key: []byte(k), Value: []byte("order " + k)}, nil)
	}
	if err := producer.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}}}); err != nil {
		t.Fatal(err)
	}
	m := joinShare(t, b, group, "member-1", topic)
	if got := acquiredString(m.fetch(t, 100)); got != "0-2/1" {
		t.Fatalf("acquired %s, want 0-2/1 (the first record of each key)", got)
	}
	m.ack(t,
		kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{FirstOffset: 0, LastOffset: 0, AcknowledgeTypes: []int8{1}}, // accept
		kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{FirstOffset: 1, LastOffset: 1, AcknowledgeTypes: []int8{2}}, // release
	)
	url := "http://" + b.Server.AdminAddr() + "/ui"
	shot := filepath.Join(t.TempDir(), "ui.png")
	runChromium(t, bin, "--screenshot="+shot, url)
	raw, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	counts := countColors(img)
	for name, rgb := range map[string][3]uint8{"Backoff": {0xae, 0xd6, 0xf1}, "KeyHeld": {0x1f, 0x61, 0x8d}, "Available": {0x34, 0x98, 0xdb}, "Acquired": {0xf3, 0x9c, 0x12}} {
		if n := counts[rgb]; n < 2000 {
			t.Errorf("%s fill rgb%v: %d pixels, want >= 2000", name, rgb, n)
		}
	}
	if flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true" {
		dst := filepath.Join("..", "docs", "ui-share-extensions.png")
		if err := os.WriteFile(dst, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", dst)
	}
	dom := string(runChromium(t, bin, "--dump-dom", url))
	for _, want := range []string{
		`<g class="range" data-state="Backoff">`,
		`<g class="range" data-state="KeyHeld">`,
		`Available (backoff until `,
		`Available (key held)`,
		`; key-ordered, redelivery backoff 10m0s x2 up to 10m0s`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
}
