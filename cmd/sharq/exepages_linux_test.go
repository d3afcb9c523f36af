package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

const sampleMaps = `00400000-00c2b000 r-xp 00000000 fe:00 9997115                            /usr/bin/sharq
00c2b000-014ec000 r--p 0082b000 fe:00 9997115                            /usr/bin/sharq
014ec000-01576000 rw-p 010ec000 fe:00 9997115                            /usr/bin/sharq
01576000-035c3000 rw-p 00000000 00:00 0 
7f001ea33000-7f001ea65000 r-xp 00000000 fe:00 1234                       /lib/other.so

7fffd379a000-7fffd37bb000 rw-p 00000000 00:00 0                          [stack]
`

func TestParseMaps(t *testing.T) {
	got, err := parseMaps([]byte(sampleMaps))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 {
		t.Fatalf("%d mappings, want 6", len(got))
	}
	want := exeMapping{start: 0xc2b000, end: 0x14ec000, perms: "r--p", dev: "fe:00", inode: 9997115}
	if got[1] != want {
		t.Fatalf("mapping 1 = %+v, want %+v", got[1], want)
	}
	for _, bad := range []string{
		"00400000-00c2b000 r-xp 00000000 fe:00",          // too few fields
		"00400000 r-xp 00000000 fe:00 1 /x",              // no range
		"zz-00c2b000 r-xp 00000000 fe:00 1 /x",           // bad start
		"00c2b000-00400000 r-xp 00000000 fe:00 1 /x",     // end before start
		"00400000-00c2b000 r-xp 00000000 fe:00 inode /x", // bad inode
		"00400000-00c2b000 rx 00000000 fe:00 1 /x",       // bad perms
	} {
		if _, err := parseMaps([]byte(bad + "\n")); err == nil {
			t.Errorf("parseMaps(%q) succeeded", bad)
		}
	}
}

// sampleSmaps is smaps of a dynamically linked binary: its relocated
// read-only data (RELRO) holds written, anonymous pages.
const sampleSmaps = `00400000-00c2b000 r-xp 00000000 fe:00 77                                 /usr/bin/sharq
Size:               8364 kB
Rss:                7512 kB
Anonymous:             0 kB
00c2b000-00c2c000 r--p 0082b000 fe:00 77                                 /usr/bin/sharq
Rss:                   4 kB
Anonymous:             4 kB
00c2c000-014ec000 r--p 0082c000 fe:00 77                                 /usr/bin/sharq
Rss:                7172 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
014ec000-01576000 rw-p 010ec000 fe:00 77                                 /usr/bin/sharq
Anonymous:           120 kB
`

func TestParseSmaps(t *testing.T) {
	maps, err := parseMaps([]byte(sampleSmaps))
	if err != nil {
		t.Fatal(err)
	}
	anon := []int64{0, 4, 0, 120}
	if len(maps) != len(anon) {
		t.Fatalf("%d mappings, want %d", len(maps), len(anon))
	}
	for i, m := range maps {
		if m.anonKB != anon[i] {
			t.Fatalf("mapping %d: Anonymous %d kB, want %d", i, m.anonKB, anon[i])
		}
	}
	got, err := exeReadOnly(maps, 0x400000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].start != 0x400000 || got[1].start != 0xc2c000 {
		t.Fatalf("picked %+v, want the code and the unwritten read-only data", got)
	}
	for _, bad := range []string{
		"Anonymous: 4 kB\n", // before any mapping
		"00400000-00c2b000 r-xp 00000000 fe:00 1 /x\nAnonymous: -4 kB\n",
		"00400000-00c2b000 r-xp 00000000 fe:00 1 /x\nAnonymous:\n",
	} {
		if _, err := parseMaps([]byte(bad)); err == nil {
			t.Errorf("parseMaps(%q) succeeded", bad)
		}
	}
}

func TestExeReadOnly(t *testing.T) {
	maps, err := parseMaps([]byte(sampleMaps))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pc   uintptr
		want []uintptr // starts of the picked mappings
		err  error
	}{
		{"pc in code", 0x401000, []uintptr{0x400000, 0xc2b000}, nil},
		{"pc in read-only data", 0xc2b000, []uintptr{0x400000, 0xc2b000}, nil},
		{"other file", 0x7f001ea33000, []uintptr{0x7f001ea33000}, nil},
		{"anonymous", 0x1576000, nil, errNoExecMapping},
		{"unmapped", 0x10, nil, errNoExecMapping},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := exeReadOnly(maps, tc.pc)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			var starts []uintptr
			for _, m := range got {
				if strings.Contains(m.perms, "w") {
					t.Fatalf("picked a writable mapping %+v", m)
				}
				starts = append(starts, m.start)
			}
			if len(starts) != len(tc.want) {
				t.Fatalf("picked %#x, want %#x", starts, tc.want)
			}
			for i := range starts {
				if starts[i] != tc.want[i] {
					t.Fatalf("picked %#x, want %#x", starts, tc.want)
				}
			}
		})
	}
}

func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestReleaseExePages: the test binary's code and read-only data stop
// counting in its RSS, and the process keeps running (pages come back on
// use).
func TestReleaseExePages(t *testing.T) {
	if traced() {
		t.Skip("under a tracer releaseExePages does nothing")
	}
	before := rssFileKB(t)
	if err := releaseExePages(); err != nil {
		t.Fatal(err)
	}
	after := rssFileKB(t)
	if after >= before {
		t.Fatalf("RssFile %d kB after release, %d kB before", after, before)
	}
	// Code that ran before still runs, and data read before is intact.
	if _, err := parseMaps([]byte(sampleMaps)); err != nil {
		t.Fatal(err)
	}
	t.Logf("RssFile %d kB -> %d kB", before, after)
}

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte(sampleMaps))
	f.Add([]byte(sampleSmaps))
	f.Add([]byte("0-0 ---p 0 0:0 0\n"))
	f.Add([]byte("ffffffffffffffff-0 r-xp 0 0:0 1 /x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		maps, err := parseMaps(b)
		if err != nil {
			return
		}
		for _, m := range maps {
			if m.end < m.start || len(m.perms) != 4 {
				t.Fatalf("accepted %+v", m)
			}
		}
	})
}
