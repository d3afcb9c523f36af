package interop

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// These tests need no JVM: they pin the parsers and the golden machinery to
// real Kafka 4.4 output captured from the tools.

func TestParseReady(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		ok         bool
	}{
		{"ready listeners=PLAINTEXT://127.0.0.1:41234", "127.0.0.1:41234", true},
		{"ready listeners=CONTROLLER://127.0.0.1:1,PLAINTEXT://127.0.0.1:9092 node=1", "127.0.0.1:9092", true},
		{"ready node=1 listeners=PLAINTEXT://[::1]:9092", "[::1]:9092", true},
		{"ready", "", false},
		{"ready listeners=PLAINTEXT://127.0.0.1:0", "", false},
		{"ready listeners=PLAINTEXT://127.0.0.1:65536", "", false},
		{"ready listeners=PLAINTEXT://127.0.0.1:+80", "", false},
		{"ready listeners=PLAINTEXT://:9092", "", false},
		{"ready listeners=SSL://127.0.0.1:9093", "", false},
		{"readyish listeners=PLAINTEXT://127.0.0.1:9092", "", false},
		{"", "", false},
	} {
		got, err := ParseReady(tc.line)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseReady(%q) = %q, %v; want %q ok=%v", tc.line, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBadReady) {
			t.Errorf("ParseReady(%q) error %v is not ErrBadReady", tc.line, err)
		}
	}
}

func FuzzParseReady(f *testing.F) {
	f.Add("ready listeners=PLAINTEXT://127.0.0.1:41234")
	f.Add("ready listeners=A://x:1,PLAINTEXT://h:2 x=y")
	f.Add("ready listeners=PLAINTEXT://[::1")
	f.Fuzz(func(t *testing.T, line string) {
		addr, err := ParseReady(line)
		if err == nil && (addr == "" || !strings.Contains(line, addr)) {
			t.Fatalf("ParseReady(%q) = %q without error", line, addr)
		}
	})
}

func TestMaskOutput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Topic: t\tTopicId: teQrBjZMRiGkDoJqP5jn6w\tPartitionCount: 3", "Topic: t\tTopicId: <ID>\tPartitionCount: 3"},
		// The zero Uuid and lower-case names stay visible.
		{"TopicId: AAAAAAAAAAAAAAAAAAAAAA", "TopicId: AAAAAAAAAAAAAAAAAAAAAA"},
		{"interop-console-topics-x", "interop-console-topics-x"},
		{"\tConsumerGroupHeartbeat(68): 0 to 1", "\tConsumerGroupHeartbeat(68): 0 to 1"},
		{"127.0.0.1:19092 (id: 1 rack: null isFenced: false) -> (", "<HOST:PORT> (id: 1 rack: null isFenced: false) -> ("},
		{"Connection to node -1 (/127.0.0.1:39701) could not", "Connection to node -1 (/<HOST:PORT>) could not"},
		{"[2026-11-29 22:01:43,369] WARN x", "[<TIME>] WARN x"},
		{"CreateTime: 1795990206966 size", "CreateTime: <TIME-MS> size"},
		{"member 5f0c8a3e-2b1d-4c7e-9a0b-1234567890ab left", "member <UUID> left"},
		{"Feature: x\tFinalizedVersionLevel: 1\tEpoch: 19", "Feature: x\tFinalizedVersionLevel: 1\tEpoch: <N>"},
		{"GROUP console-consumer-48213 x", "GROUP console-consumer-<N> x"},
	} {
		if got := MaskOutput(tc.in, nil); got != tc.want {
			t.Errorf("MaskOutput(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	lit := map[string]string{"/tmp/a": "<DIR>", "/tmp/a/b": "<DATA>"}
	if got := MaskOutput("log.dirs=/tmp/a/b and /tmp/a", lit); got != "log.dirs=<DATA> and <DIR>" {
		t.Errorf("literal masks: %q", got)
	}
}

func FuzzMaskOutput(f *testing.F) {
	f.Add("TopicId: teQrBjZMRiGkDoJqP5jn6w 127.0.0.1:1 [2026-11-29 22:01:43,369]")
	f.Add("Epoch: 5 console-consumer-1 1795990206966")
	f.Fuzz(func(t *testing.T, s string) {
		once := MaskOutput(s, nil)
		if twice := MaskOutput(once, nil); twice != once {
			t.Fatalf("masking is not idempotent: %q -> %q -> %q", s, once, twice)
		}
	})
}

func TestDiffLines(t *testing.T) {
	if d := DiffLines("a\nb\n", "a\nb\n"); d != nil {
		t.Errorf("equal inputs gave %q", d)
	}
	got := DiffLines("a\nb\nc\n", "a\nc\nd\n")
	want := []string{" a", "-b", " c", "+d"}
	if !slices.Equal(got, want) {
		t.Errorf("DiffLines = %q, want %q", got, want)
	}
	got = DiffLines("", "x")
	if !slices.Equal(got, []string{"-", "+x"}) {
		t.Errorf("DiffLines(empty, x) = %q", got)
	}
}

func TestRecorderCompare(t *testing.T) {
	r, err := NewRecorder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r.AddLiteral("kafka", "/tmp/k1", "<DIR>")
	r.AddLiteral("sharq", "/tmp/s2", "<DIR>")
	steps := []struct{ target, step, text string }{
		{"kafka", "topics/describe", "Topic: t\tTopicId: teQrBjZMRiGkDoJqP5jn6w\n"},
		{"sharq", "topics/describe", "Topic: t\tTopicId: Zx9QrBjZMRiGkDoJqP5jn6\n"},
		{"kafka", "configs/all", "log.dirs=/tmp/k1/data\nnum.partitions=1\n"},
		{"sharq", "configs/all", "log.dirs=/tmp/s2/data\nnum.partitions=3\n"},
		{"kafka", "only/kafka", "x\n"},
	}
	for _, s := range steps {
		if err := r.Record(s.target, s.step, s.text); err != nil {
			t.Fatal(err)
		}
	}
	diffs, err := r.Compare("kafka", "sharq")
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 || diffs[0].Step != "configs/all" || diffs[1].Step != "only/kafka" {
		t.Fatalf("diffs = %+v", diffs)
	}
	if !slices.Equal(diffs[0].Lines, []string{" log.dirs=<DIR>/data", "-num.partitions=1", "+num.partitions=3"}) {
		t.Errorf("configs diff = %q", diffs[0].Lines)
	}
	if diffs[1].Note != "only in kafka" {
		t.Errorf("note %q", diffs[1].Note)
	}
	sum, err := os.ReadFile(filepath.Join(r.Dir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "3 steps, 1 identical, 2 different") ||
		!strings.Contains(string(sum), "=== configs/all: differs\n log.dirs=<DIR>/data\n") ||
		!strings.Contains(string(sum), "=== only in kafka (1 steps):\nonly/kafka\n") {
		t.Errorf("summary:\n%s", sum)
	}
	raw, err := os.ReadFile(filepath.Join(r.Dir, "sharq", "configs", "all.txt"))
	if err != nil || string(raw) != steps[3].text {
		t.Errorf("recorded file %q, %v", raw, err)
	}
}

const describeOut = "Topic: t1\tTopicId: teQrBjZMRiGkDoJqP5jn6w\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: min.insync.replicas=1\n" +
	"\tTopic: t1\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: \n" +
	"\tTopic: t1\tPartition: 1\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: \n"

func TestParseTopicDescribe(t *testing.T) {
	all, err := parseTopicDescribe(describeOut)
	if err != nil {
		t.Fatal(err)
	}
	d := all["t1"]
	if d == nil || d.Header["PartitionCount"] != "2" || d.Header["Configs"] != "min.insync.replicas=1" || len(d.Partitions) != 2 {
		t.Fatalf("parsed %+v", d)
	}
	if p := d.Partitions[1]; p["Partition"] != "1" || p["Leader"] != "1" || p["Elr"] != "" {
		t.Errorf("partition 1 = %v", p)
	}
	for _, bad := range []string{"\tTopic: t1\tPartition: 0\n", "Topic: t1\tnocolon\n", "Partition: 0\n"} {
		if _, err := parseTopicDescribe(bad); err == nil {
			t.Errorf("parseTopicDescribe(%q) accepted", bad)
		}
	}
}

func FuzzParseTopicDescribe(f *testing.F) {
	f.Add(describeOut)
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseTopicDescribe(s) })
}

func TestParseAPIVersions(t *testing.T) {
	out := "127.0.0.1:1 (id: 1 rack: null isFenced: false) -> (\n" +
		"\tProduce(0): 0 to 13 [usable: 13],\n" +
		"\tPushTelemetry(72): UNSUPPORTED,\n" +
		"\tUnregisterController(94): 0 [usable: 0]\n)\n"
	header, apis, err := parseAPIVersions(out)
	if err != nil {
		t.Fatal(err)
	}
	if header != "127.0.0.1:1 (id: 1 rack: null isFenced: false) -> (" {
		t.Errorf("header %q", header)
	}
	want := map[string]apiRange{
		"Produce":              {key: 0, min: 0, max: 13, usable: 13},
		"PushTelemetry":        {key: 72, unsupported: true},
		"UnregisterController": {key: 94, min: 0, max: 0, usable: 0},
	}
	if len(apis) != len(want) {
		t.Errorf("apis = %+v", apis)
	}
	for k, w := range want {
		if apis[k] != w {
			t.Errorf("%s = %+v, want %+v", k, apis[k], w)
		}
	}
	if _, _, err := parseAPIVersions("\tProduce(0): zero\n"); err == nil {
		t.Error("bad api line accepted")
	}
}

func FuzzParseAPIVersions(f *testing.F) {
	f.Add("h -> (\n\tProduce(0): 0 to 13 [usable: 13],\n)\n")
	f.Fuzz(func(t *testing.T, s string) { _, _, _ = parseAPIVersions(s) })
}

func TestParseFeaturesAndConfigs(t *testing.T) {
	feats, err := parseFeatures("Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.4-IV2\tFinalizedVersionLevel: 4.4-IV2\tEpoch: 19\n")
	if err != nil || feats["metadata.version"]["FinalizedVersionLevel"] != "4.4-IV2" {
		t.Errorf("features %v, %v", feats, err)
	}
	if _, err := parseFeatures("Feature: x Odd\n"); err == nil {
		t.Error("odd feature line accepted")
	}
	cfg, err := parseConfigs("Dynamic configs for topic t are:\n  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}\n")
	if err != nil {
		t.Fatal(err)
	}
	if e := cfg["Dynamic configs for topic t are"]["retention.ms"]; e.value != "1000" || e.synonyms != "DYNAMIC_TOPIC_CONFIG:retention.ms=1000" {
		t.Errorf("config entry %+v", e)
	}
	if _, err := parseConfigs("  orphan=1 sensitive=false synonyms={}\n"); err == nil {
		t.Error("config line outside a section accepted")
	}
}

func FuzzParseConfigs(f *testing.F) {
	f.Add("All configs for broker 1 are:\n  a=b sensitive=false synonyms={DEFAULT_CONFIG:a=b}\n")
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseConfigs(s) })
}

// dumpOut is DumpLogSegments output for two of the golden batches.
const dumpOut = `Dumping /x/golden-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1767323045001 size: 106 magic: 2 compresscodec: none crc: 3632630840 isvalid: true
| offset: 0 CreateTime: 1767323045000 keySize: 2 valueSize: 10 sequence: -1 headerKeys: [] key: k0 payload: value zero
| offset: 1 CreateTime: 1767323045001 keySize: 2 valueSize: 9 sequence: -1 headerKeys: [h1,h2] key: k1 payload: value one
baseOffset: 2 lastOffset: 2 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 106 CreateTime: 1767323045000 size: 68 magic: 2 compresscodec: none crc: 3858325812 isvalid: true
| offset: 2 CreateTime: 1767323045000 keySize: 0 valueSize: 0 sequence: -1 headerKeys: [] key:  payload: 
`

func TestParseDump(t *testing.T) {
	b, err := parseDump(dumpOut)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 2 || len(b[0].records) != 2 || len(b[1].records) != 1 {
		t.Fatalf("parsed %+v", b)
	}
	if b[0].fields["lastOffset"] != "1" || b[0].fields["compresscodec"] != "none" {
		t.Errorf("batch 0 fields %v", b[0].fields)
	}
	r := b[0].records[1]
	if r.offset != 1 || r.headerKeys != "h1,h2" || deref(r.key) != `"k1"` || deref(r.payload) != `"value one"` {
		t.Errorf("record 1 = %+v key %s payload %s", r, deref(r.key), deref(r.payload))
	}
	if e := b[1].records[0]; deref(e.key) != `""` || deref(e.payload) != `""` {
		t.Errorf("empty record key %s payload %s", deref(e.key), deref(e.payload))
	}
	// checkDump against the full golden set must complain about the count.
	problems, err := checkDump(dumpOut)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0], "2 batches") {
		t.Errorf("checkDump = %q, %v", problems, err)
	}
	if _, err := parseDump("| offset: 0 orphan\n"); err == nil {
		t.Error("record line before any batch accepted")
	}
}

func FuzzParseDump(f *testing.F) {
	f.Add(dumpOut)
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseDump(s) })
}

func TestGroupTable(t *testing.T) {
	out := "\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID\n" +
		"gc              g               0          0               0               0               -               -               -\n" +
		"gc              g               1          6               6               0               -               -               -\n" +
		"\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\n" +
		"gc              127.0.0.1:19092  (1)      -                    Empty                0\n"
	rows := groupTable(out)
	if len(rows) != 3 {
		t.Fatalf("rows %v", rows)
	}
	if r := rows[1]; r["PARTITION"] != "1" || r["CURRENT-OFFSET"] != "6" || r["LAG"] != "0" || r["CLIENT-ID"] != "-" {
		t.Errorf("offset row %v", r)
	}
	if r := rows[2]; r["COORDINATOR"] != "127.0.0.1:19092 (1)" || r["STATE"] != "Empty" || r["#MEMBERS"] != "0" || r["ASSIGNMENT-STRATEGY"] != "-" {
		t.Errorf("state row %v", r)
	}
}

func FuzzGroupTable(f *testing.F) {
	f.Add("GROUP COORDINATOR (ID) STATE\ng h:1 (1) Empty\n")
	f.Fuzz(func(t *testing.T, s string) { _ = groupTable(s) })
}
