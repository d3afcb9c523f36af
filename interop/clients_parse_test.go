package interop

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseRdEvents(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		events  int
		doneKey string
		wantErr string
	}{
		{name: "records then done", out: `{"event": "record", "key": "key-0"}` + "\n" +
			`{"event": "done", "count": 1}` + "\n", events: 1, doneKey: "count"},
		{name: "blank lines skipped", out: "\n" + `{"event": "done", "count": 0}` + "\n\n", events: 0, doneKey: "count"},
		{name: "no done", out: `{"event": "record"}` + "\n", wantErr: "does not end with a done event"},
		{name: "empty", out: "", wantErr: "does not end with a done event"},
		{name: "not json", out: "Traceback (most recent call last):\n", wantErr: "invalid character"},
		{name: "no event key", out: `{"key": "x"}` + "\n", wantErr: "has no event"},
		{name: "done not last", out: `{"event": "done"}` + "\n" + `{"event": "record"}` + "\n", wantErr: "does not end with a done event"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events, done, err := parseRdEvents(tc.out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != tc.events {
				t.Errorf("%d events, want %d", len(events), tc.events)
			}
			if _, ok := done[tc.doneKey]; !ok || done.str("event") != "done" {
				t.Errorf("done event %v lacks %q", done, tc.doneKey)
			}
		})
	}
}

func TestRdEventAccessors(t *testing.T) {
	_, done, err := parseRdEvents(`{"event": "done", "count": 12, "features": ["MsgVer2", "ApiVersion"], "assigned": [0, 1], "client": "2.16.1"}`)
	if err != nil {
		t.Fatal(err)
	}
	if done.num("count") != 12 || done.str("client") != "2.16.1" {
		t.Errorf("count %d client %q", done.num("count"), done.str("client"))
	}
	if got := done.strs("features"); !slices.Equal(got, []string{"MsgVer2", "ApiVersion"}) {
		t.Errorf("features %v", got)
	}
	if got := done.strs("assigned"); !slices.Equal(got, []string{"0", "1"}) {
		t.Errorf("assigned %v", got)
	}
	// Missing or mistyped keys read as zero values, never panic.
	if done.num("nope") != 0 || done.str("count") != "" || done.strs("count") != nil {
		t.Errorf("zero values: %d %q %v", done.num("nope"), done.str("count"), done.strs("count"))
	}
}

func TestDemoOffsets(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    map[int][]int
		n       int
		wantErr bool
	}{
		{name: "two partitions", out: "Partition:0\tOffset:0\tABC\nPartition:1\tOffset:0\tXYZ\nPartition:0\tOffset:1\tQ\n",
			want: map[int][]int{0: {0, 1}, 1: {0}}, n: 3},
		{name: "partial last line ignored", out: "Partition:1\tOffset:7\tAB\nPartition:1\tOff",
			want: map[int][]int{1: {7}}, n: 1},
		{name: "deprecation notice first", out: propertyDeprecated + "\nPartition:0\tOffset:3\tZ\n",
			want: map[int][]int{0: {3}}, n: 1},
		{name: "empty", out: "", want: map[int][]int{}, n: 0},
		{name: "notice elsewhere is an error", out: "Partition:0\tOffset:3\tZ\n" + propertyDeprecated + "\n", wantErr: true},
		{name: "garbage", out: "hello\n", wantErr: true},
		{name: "lower-case payload is not perf-test output", out: "Partition:0\tOffset:0\tabc\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n, err := demoOffsets(tc.out)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error for %q", tc.out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.n || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v (%d lines), want %v (%d)", got, n, tc.want, tc.n)
			}
		})
	}
}

func TestTableHead(t *testing.T) {
	out := "\nGROUP              COORDINATOR (ID)          STATE           #MEMBERS\ng 127.0.0.1:1  (1)      Stable          3\n"
	if got, want := tableHead(out), "GROUP COORDINATOR (ID) STATE #MEMBERS"; got != want {
		t.Errorf("tableHead %q, want %q", got, want)
	}
	if got := tableHead("Share group 'g' has no active members.\n"); got != "(no header)" {
		t.Errorf("tableHead without a header: %q", got)
	}
}

func TestLockedBufferSignalsWrites(t *testing.T) {
	b := &lockedBuffer{written: make(chan struct{}, 1)}
	for _, s := range []string{"a", "b", "c"} {
		if _, err := b.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	// Three writes leave one token: a reader wakes once and reads all.
	select {
	case <-b.written:
	case <-time.After(time.Second):
		t.Fatal("no token after writes")
	}
	select {
	case <-b.written:
		t.Fatal("tokens piled up")
	default:
	}
	if b.String() != "abc" {
		t.Errorf("buffer %q", b.String())
	}
	// Without a channel writes still work.
	var plain lockedBuffer
	if _, err := plain.Write([]byte("x")); err != nil || plain.String() != "x" {
		t.Errorf("plain buffer: %v %q", err, plain.String())
	}
}
