package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/broker/brokertest"
	"sharq/config"
)

// The /ui page on the metrics listener, tested against live broker state:
// a share-partition whose window holds one range in each state, driven by
// raw ShareGroupHeartbeat / ShareFetch / ShareAcknowledge requests so the
// ranges are exact.

const (
	uiTopic       = "orders"
	uiShareGroup  = "workers"
	uiMember      = "ui-test-member-1"
	uiConsumerGrp = "billing"
	// A group id is free text: it must reach the page as text only.
	uiEvilGroup = `<script>alert(1)</script><img src=x onerror=alert(2)>`
)

// Fill colours of the page (broker/ui/index.html COLORS), as RGB.
var uiColors = map[string][3]uint8{
	"Available":    {0x34, 0x98, 0xdb},
	"Acquired":     {0xf3, 0x9c, 0x12},
	"Acknowledged": {0x27, 0xae, 0x60},
	"Archived":     {0x7f, 0x8c, 0x8d},
}

// The /ui/state document as the page reads it.
type uiStateDoc struct {
	Now       int64 `json:"now"`
	MaxRanges int   `json:"maxRanges"`
	Topics    []struct {
		Name       string `json:"name"`
		ID         string `json:"id"`
		Partitions []struct {
			Partition     int32 `json:"partition"`
			LogStart      int64 `json:"logStart"`
			HighWatermark int64 `json:"highWatermark"`
			LogEnd        int64 `json:"logEnd"`
		} `json:"partitions"`
	} `json:"topics"`
	ConsumerGroups []struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		State   string `json:"state"`
		Members []struct {
			ID string `json:"id"`
		} `json:"members"`
		Offsets []struct {
			Topic         string `json:"topic"`
			Partition     int32  `json:"partition"`
			Committed     int64  `json:"committed"`
			HighWatermark int64  `json:"highWatermark"`
			Lag           int64  `json:"lag"`
		} `json:"offsets"`
	} `json:"consumerGroups"`
	ShareGroups []struct {
		ID      string `json:"id"`
		State   string `json:"state"`
		Members []struct {
			ID       string   `json:"id"`
			Assigned []string `json:"assigned"`
		} `json:"members"`
		Partitions []uiSharePartDoc `json:"partitions"`
	} `json:"shareGroups"`
}

type uiSharePartDoc struct {
	Topic         string       `json:"topic"`
	Partition     int32        `json:"partition"`
	Initialised   bool         `json:"initialised"`
	SPSO          int64        `json:"spso"`
	SPEO          int64        `json:"speo"`
	StateEpoch    int32        `json:"stateEpoch"`
	LogStart      int64        `json:"logStart"`
	HighWatermark int64        `json:"highWatermark"`
	Lag           int64        `json:"lag"`
	Ranges        []uiRangeDoc `json:"ranges"`
	RangesTotal   int          `json:"rangesTotal"`
}

type uiRangeDoc struct {
	First         int64  `json:"first"`
	Last          int64  `json:"last"`
	State         string `json:"state"`
	DeliveryCount int16  `json:"deliveryCount"`
	Owner         string `json:"owner"`
	LockDeadline  int64  `json:"lockDeadline"`
}

type uiFixture struct {
	b    *brokertest.Broker
	base string
	// The lock deadline of the acquired range lies in [lockFrom, lockTo].
	lockFrom, lockTo int64
}

// newUIFixture: topic "orders" with ten single-record batches (offsets
// 0..9), topic "payments" with two empty partitions, consumer group
// "billing" committed at 4, share group "workers" whose member acquired
// 0..7 then accepted 2-3, released 4-5 and rejected 6-7 (so 0-1 stay
// Acquired, 8-9 are not fetched yet), and a share group with markup in its
// name that starts at 10 with nothing in flight. Locks and sessions last
// ten minutes so nothing changes while the test looks.
func newUIFixture(t *testing.T) *uiFixture {
	t.Helper()
	const lockMs = 600_000
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) {
		c.MetricsListener = "127.0.0.1:0"
		c.GroupShareMaxRecordLockDurationMs, c.GroupShareRecordLockDurationMs = lockMs, lockMs
		c.GroupShareMaxSessionTimeoutMs, c.GroupShareSessionTimeoutMs = lockMs, lockMs
	}))
	ctx := testCtx(t)
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, uiTopic, 1, nil)
	mustCreateTopic(t, adm, "payments", 2, nil)
	producer := newClient(t, b, kgo.DefaultProduceTopic(uiTopic))
	for i := range 10 {
		// One synchronous produce per record: one log batch per offset,
		// so batch-optimized acquisition takes exactly MaxRecords.
		produceSync(t, producer, &kgo.Record{Value: []byte(fmt.Sprintf("order-%d", i))})
	}
	if _, err := adm.CommitOffsets(ctx, uiConsumerGrp, kadm.Offsets{uiTopic: {0: {Topic: uiTopic, Partition: 0, At: 4, LeaderEpoch: -1}}}); err != nil {
		t.Fatalf("commit offsets: %v", err)
	}
	for group, at := range map[string]int64{uiShareGroup: 0, uiEvilGroup: 10} {
		res, err := adm.AlterShareGroupOffsets(ctx, group, kadm.Offsets{uiTopic: {0: {Topic: uiTopic, Partition: 0, At: at}}})
		if err != nil {
			t.Fatalf("alter share group offsets %q: %v", group, err)
		}
		if err := res.Error(); err != nil {
			t.Fatalf("alter share group offsets %q: %v", group, err)
		}
	}

	// The share member, by hand: the client stays open (its connection
	// holds the share session) until the test ends.
	m := joinShare(t, b, uiShareGroup, uiMember, uiTopic)
	lockFrom := time.Now().Add(lockMs * time.Millisecond).UnixMilli()
	acquired := acquiredString(m.fetch(t, 8))
	lockTo := time.Now().Add(lockMs*time.Millisecond).UnixMilli() + 1
	if acquired != "0-7/1" {
		t.Fatalf("share fetch acquired %s, want 0-7/1", acquired)
	}
	m.ack(t,
		kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{FirstOffset: 2, LastOffset: 3, AcknowledgeTypes: []int8{1}}, // accept
		kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{FirstOffset: 4, LastOffset: 5, AcknowledgeTypes: []int8{2}}, // release
		kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{FirstOffset: 6, LastOffset: 7, AcknowledgeTypes: []int8{3}}, // reject
	)
	return &uiFixture{b: b, base: "http://" + b.Server.AdminAddr(), lockFrom: lockFrom, lockTo: lockTo}
}

// shareMember is a share group member driven by raw requests on one
// topic's partition 0.
type shareMember struct {
	cl      *kgo.Client
	group   string
	id      string
	topicID [16]byte
	epoch   int32 // share session epoch of the next request
}

func joinShare(t *testing.T, b *brokertest.Broker, group, member, topic string) *shareMember {
	t.Helper()
	cl := newClient(t, b)
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = group, member, 0, []string{topic}
	resp, err := hb.RequestWith(testCtx(t), cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("share group heartbeat: %v %+v", err, resp)
	}
	return &shareMember{cl: cl, group: group, id: member, topicID: topicIDs(t, newAdmin(t, b), topic)}
}

// fetch acquires up to maxRecords without waiting.
func (m *shareMember) fetch(t *testing.T, maxRecords int32) []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord {
	t.Helper()
	f := kmsg.NewPtrShareFetchRequest()
	f.GroupID, f.MemberID, f.ShareSessionEpoch = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id), m.epoch
	f.MaxWaitMillis, f.MinBytes, f.MaxBytes, f.MaxRecords, f.BatchSize = 0, 0, 1<<20, maxRecords, maxRecords
	f.Topics = []kmsg.ShareFetchRequestTopic{{TopicID: m.topicID, Partitions: []kmsg.ShareFetchRequestTopicPartition{{Partition: 0, PartitionMaxBytes: 1 << 20}}}}
	resp, err := f.RequestWith(testCtx(t), m.cl)
	if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("share fetch: %v %+v", err, resp)
	}
	m.epoch++
	return resp.Topics[0].Partitions[0].AcquiredRecords
}

// acquiredString formats acquired records as "first-last/count" entries.
func acquiredString(recs []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord) string {
	var got []string
	for _, a := range recs {
		got = append(got, fmt.Sprintf("%d-%d/%d", a.FirstOffset, a.LastOffset, a.DeliveryCount))
	}
	return strings.Join(got, " ")
}

func (m *shareMember) ack(t *testing.T, batches ...kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) {
	t.Helper()
	a := kmsg.NewPtrShareAcknowledgeRequest()
	a.GroupID, a.MemberID, a.ShareSessionEpoch = kmsg.StringPtr(m.group), kmsg.StringPtr(m.id), m.epoch
	a.Topics = []kmsg.ShareAcknowledgeRequestTopic{{TopicID: m.topicID, Partitions: []kmsg.ShareAcknowledgeRequestTopicPartition{{
		Partition: 0, AcknowledgementBatches: batches,
	}}}}
	resp, err := a.RequestWith(testCtx(t), m.cl)
	if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("share acknowledge: %v %+v", err, resp)
	}
	m.epoch++
}

func (f *uiFixture) get(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, f.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp, body
}

func TestUIState(t *testing.T) {
	t.Parallel()
	f := newUIFixture(t)
	resp, body := f.get(t, "/ui/state")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/ui/state: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var doc uiStateDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("decode /ui/state: %v\n%s", err, body)
	}
	if doc.MaxRanges != 500 {
		t.Errorf("maxRanges %d, want 500", doc.MaxRanges)
	}

	var topics []string
	for _, tp := range doc.Topics {
		for _, p := range tp.Partitions {
			topics = append(topics, fmt.Sprintf("%s-%d:%d..%d/%d", tp.Name, p.Partition, p.LogStart, p.HighWatermark, p.LogEnd))
		}
	}
	if got, want := strings.Join(topics, " "), "orders-0:0..10/10 payments-0:0..0/0 payments-1:0..0/0"; got != want {
		t.Errorf("topics %s, want %s", got, want)
	}

	if len(doc.ConsumerGroups) != 1 {
		t.Fatalf("consumer groups %+v, want billing only", doc.ConsumerGroups)
	}
	g := doc.ConsumerGroups[0]
	if g.ID != uiConsumerGrp || g.State != "Empty" || len(g.Members) != 0 || len(g.Offsets) != 1 {
		t.Errorf("consumer group %+v", g)
	} else if o := g.Offsets[0]; o.Topic != uiTopic || o.Partition != 0 || o.Committed != 4 || o.HighWatermark != 10 || o.Lag != 6 {
		t.Errorf("consumer group offset %+v, want orders-0 committed 4 hw 10 lag 6", o)
	}

	// Sorted by id: '<' sorts before 'w'.
	if len(doc.ShareGroups) != 2 || doc.ShareGroups[0].ID != uiEvilGroup || doc.ShareGroups[1].ID != uiShareGroup {
		t.Fatalf("share groups %+v, want [%q %q]", doc.ShareGroups, uiEvilGroup, uiShareGroup)
	}
	evil, sg := doc.ShareGroups[0], doc.ShareGroups[1]
	if sg.State != "Stable" || len(sg.Members) != 1 || sg.Members[0].ID != uiMember || strings.Join(sg.Members[0].Assigned, ",") != "orders-0" {
		t.Errorf("share group %s: state %s members %+v", sg.ID, sg.State, sg.Members)
	}
	if len(sg.Partitions) != 1 {
		t.Fatalf("share group %s partitions %+v", sg.ID, sg.Partitions)
	}
	got := sg.Partitions[0]
	if len(got.Ranges) > 0 {
		if dl := got.Ranges[0].LockDeadline; dl < f.lockFrom || dl > f.lockTo {
			t.Errorf("lock deadline %d outside [%d, %d]", dl, f.lockFrom, f.lockTo)
		}
	}
	want := uiSharePartDoc{
		Topic: uiTopic, Partition: 0, Initialised: true, SPSO: 0, SPEO: 7, StateEpoch: got.StateEpoch,
		LogStart: 0, HighWatermark: 10,
		Lag: 6, // 10 - SPSO 0 - 4 delivered (2-3 accepted, 6-7 archived)
		Ranges: []uiRangeDoc{
			{First: 0, Last: 1, State: "Acquired", DeliveryCount: 1, Owner: uiMember},
			{First: 2, Last: 3, State: "Acknowledged", DeliveryCount: 1},
			{First: 4, Last: 5, State: "Available", DeliveryCount: 1},
			{First: 6, Last: 7, State: "Archived", DeliveryCount: 1},
		},
		RangesTotal: 4,
	}
	if len(got.Ranges) > 0 {
		want.Ranges[0].LockDeadline = got.Ranges[0].LockDeadline // checked above
	}
	if gj, wj := mustJSON(t, got), mustJSON(t, want); gj != wj {
		t.Errorf("share-partition\n got %s\nwant %s", gj, wj)
	}
	wantEvil := uiSharePartDoc{Topic: uiTopic, Initialised: true, SPSO: 10, SPEO: 9, StateEpoch: evil.Partitions[0].StateEpoch,
		HighWatermark: 10, Lag: 0, Ranges: []uiRangeDoc{}}
	if evil.State != "Empty" || len(evil.Partitions) != 1 || mustJSON(t, evil.Partitions[0]) != mustJSON(t, wantEvil) {
		t.Errorf("share group %q: %+v", evil.ID, evil)
	}

	// Markup in names is escaped in the JSON itself, and the encoding is
	// stable: a second read differs only in "now".
	if bytes.Contains(body, []byte("<script>")) || !bytes.Contains(body, []byte(`\u003cscript\u003e`)) {
		t.Errorf("/ui/state does not escape %q", uiEvilGroup)
	}
	_, again := f.get(t, "/ui/state")
	now := regexp.MustCompile(`"now":\d+`)
	if a, b := now.ReplaceAll(body, nil), now.ReplaceAll(again, nil); !bytes.Equal(a, b) {
		t.Errorf("/ui/state not stable:\n%s\n%s", a, b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUIPage(t *testing.T) {
	t.Parallel()
	f := newUIFixture(t)
	resp, body := f.get(t, "/ui")
	page := string(body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("/ui: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	for _, want := range []string{
		"<!doctype html>",
		`<div id="share"></div>`,
		`<div id="topics"></div>`,
		`<div id="groups"></div>`,
		`<script id="initial-state" type="application/json">{"now":`,
		`fetch("/ui/state"`,
		`setInterval(refresh, 1000)`,
		// The embedded snapshot is the live state.
		`{"first":0,"last":1,"state":"Acquired","deliveryCount":1,"owner":"` + uiMember + `"`,
		`{"first":4,"last":5,"state":"Available","deliveryCount":1}`,
		`"id":"\u003cscript\u003ealert(1)\u003c/script\u003e\u003cimg src=x onerror=alert(2)\u003e"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/ui lacks %q", want)
		}
	}
	// The name only appears escaped; the page loads nothing from elsewhere
	// and never writes markup from data.
	for _, bad := range []string{"<script>alert", "<img src=x", `src="`, "href=", "innerHTML", "insertAdjacentHTML", "document.write"} {
		if strings.Contains(page, bad) {
			t.Errorf("/ui contains %q", bad)
		}
	}
	if strings.Contains(page, "__SHARQ_UI_STATE__") {
		t.Error("/ui still holds the state placeholder")
	}

	req, _ := http.NewRequestWithContext(testCtx(t), http.MethodPost, f.base+"/ui/state", nil)
	post, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui/state: %d, want 405", post.StatusCode)
	}
}

// chromium finds Debian's headless Chromium, or skips: CI sets
// SHARQTEST_REQUIRE_CHROMIUM=1 so a missing browser fails there.
func chromium(t *testing.T) string {
	t.Helper()
	const path = "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("SHARQTEST_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("chromium required (SHARQTEST_REQUIRE_CHROMIUM=1): %v", err)
		}
		t.Skipf("no %s (apt-get install chromium): %v", path, err)
	}
	return path
}

// runChromium runs one headless Chromium with its own profile and returns
// its stdout. The context bounds it; cancellation kills it.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--force-color-profile=srgb",
		"--user-data-dir=" + t.TempDir(), "--window-size=1200,800", "--virtual-time-budget=3000"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// TestUIChromium renders /ui in headless Chromium: the screenshot must
// hold each state's fill colour in quantity (the bar was drawn from live
// state, not just the legend), and the rendered DOM the partition's row
// with its ranges and the hostile group name as text.
func TestUIChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	f := newUIFixture(t)
	url := f.base + "/ui"

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
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 800 {
		t.Fatalf("screenshot %v, want 1200x800", b)
	}
	counts := countColors(img)
	// One range is 2 of the 10 offsets on a 1100 px bar 24 px high: about
	// 5000 pixels; a legend swatch is 144.
	for state, rgb := range uiColors {
		if n := counts[rgb]; n < 2000 {
			t.Errorf("%s fill rgb%v: %d pixels, want >= 2000", state, rgb, n)
		} else {
			t.Logf("%s fill: %d pixels", state, n)
		}
	}
	if flag.Lookup("update") != nil && flag.Lookup("update").Value.String() == "true" {
		dst := filepath.Join("..", "docs", "ui.png")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", dst)
	}

	dom := string(runChromium(t, bin, "--dump-dom", url))
	if n := strings.Count(dom, `<g class="range"`); n != 4 {
		t.Errorf("rendered DOM has %d ranges, want 4", n)
	}
	for _, want := range []string{
		`<div class="sp" data-group="workers" data-topic="orders" data-partition="0">`,
		`<g class="range" data-state="Acquired">`,
		`<g class="range" data-state="Acknowledged">`,
		`<g class="range" data-state="Available">`,
		`<g class="range" data-state="Archived">`,
		`SPSO 0  SPEO 7  HW 10  lag 6`,
		`&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;`,
		`payments`,
		`billing`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if strings.Contains(dom, "<img") {
		t.Errorf("rendered DOM has an injected element:\n%s", dom)
	}
	// The page refreshed from /ui/state by itself at least once, and the
	// last refresh succeeded.
	if !regexp.MustCompile(`<body data-refreshes="[1-9][0-9]*">`).MatchString(dom) ||
		!strings.Contains(dom, `<span id="status" class="status">updated `) {
		t.Errorf("page did not refresh from /ui/state:\n%s", dom)
	}
}

func countColors(img image.Image) map[[3]uint8]int {
	counts := map[[3]uint8]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			counts[[3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8)}]++
		}
	}
	return counts
}

// TestUICapsRanges: a window of 1100 single-offset ranges (every other
// offset accepted, the rest released) is sent and drawn capped at 500, and
// the page says so.
func TestUICapsRanges(t *testing.T) {
	t.Parallel()
	const n, topic, group = 1100, "wide", "wide-sg"
	b := brokertest.New(t, brokertest.WithConfig(func(c *config.Config) { c.MetricsListener = "127.0.0.1:0" }))
	f := &uiFixture{b: b, base: "http://" + b.Server.AdminAddr()}
	adm := newAdmin(t, b)
	mustCreateTopic(t, adm, topic, 1, nil)
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Value: []byte("r")}
	}
	produceSync(t, newClient(t, b, kgo.DefaultProduceTopic(topic)), recs...)
	if _, err := adm.AlterShareGroupOffsets(testCtx(t), group, kadm.Offsets{topic: {0: {Topic: topic, Partition: 0, At: 0}}}); err != nil {
		t.Fatal(err)
	}
	m := joinShare(t, b, group, "wide-member", topic)
	var batches []kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch
	next := int64(0)
	for fetches := 0; next < n; fetches++ {
		got := m.fetch(t, 500)
		if len(got) == 0 || fetches > 10 {
			t.Fatalf("acquired only up to offset %d of %d", next, n)
		}
		for _, a := range got {
			if a.FirstOffset != next {
				t.Fatalf("acquired %d-%d, want from %d", a.FirstOffset, a.LastOffset, next)
			}
			types := make([]int8, 0, a.LastOffset-a.FirstOffset+1)
			for o := a.FirstOffset; o <= a.LastOffset; o++ {
				types = append(types, int8(2-o%2)) // even: release (2), odd: accept (1)
			}
			batches = append(batches, kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{FirstOffset: a.FirstOffset, LastOffset: a.LastOffset, AcknowledgeTypes: types})
			next = a.LastOffset + 1
		}
	}
	m.ack(t, batches...)

	_, body := f.get(t, "/ui/state")
	var doc uiStateDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.ShareGroups) != 1 || len(doc.ShareGroups[0].Partitions) != 1 {
		t.Fatalf("share groups %s", body)
	}
	p := doc.ShareGroups[0].Partitions[0]
	if p.SPSO != 0 || p.SPEO != n-1 || p.RangesTotal != n || len(p.Ranges) != 500 || p.Lag != n/2 {
		t.Fatalf("SPSO %d SPEO %d ranges %d of %d lag %d, want 0 %d 500 of %d lag %d",
			p.SPSO, p.SPEO, len(p.Ranges), p.RangesTotal, p.Lag, n-1, n, n/2)
	}
	for i, r := range p.Ranges {
		want := uiRangeDoc{First: int64(i), Last: int64(i), State: "Available", DeliveryCount: 1}
		if i%2 == 1 {
			want.State = "Acknowledged"
		}
		if r != want {
			t.Fatalf("range %d: %+v, want %+v", i, r, want)
		}
	}

	bin := chromium(t)
	dom := string(runChromium(t, bin, "--dump-dom", f.base+"/ui"))
	if got := strings.Count(dom, `<g class="range"`); got != 500 {
		t.Errorf("rendered DOM has %d ranges, want 500", got)
	}
	if want := "showing the first 500 of 1100 ranges"; !strings.Contains(dom, want) {
		t.Errorf("rendered DOM lacks %q", want)
	}
}
