package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"syscall"
)

// Start-up runs code that never runs again: package inits (protobuf,
// prometheus, pebble's tables), flag and config parsing, store bootstrap.
// The kernel maps the executable's pages in windows around each fault
// (fault-around, 64 KB by default), so once the broker is ready most of its
// 17 MB of code and read-only data is mapped and counted in its RSS,
// although it is clean page cache shared with every other reader of the
// file. Dropping those mappings once, when the broker is ready, leaves it
// mapping what it runs from then on; pages are mapped again from the page
// cache on next use. On the release build (CGO_ENABLED=0) idle RSS goes from
// about 17.5 MB to 7-9 MB; a cgo build was seen to map most of it back.

// errNoExecMapping means /proc/self/smaps shows no read-only mapping of
// the executable (an unusual loader, or a maps format we do not know).
var errNoExecMapping = errors.New("no read-only mapping of the executable")

// exeMapping is one address range of /proc/self/smaps.
type exeMapping struct {
	start, end uintptr
	perms      string
	dev        string
	inode      uint64
	// anonKB is the mapping's "Anonymous:" figure: pages of a private file
	// mapping that were written (relocations of a dynamically linked
	// binary, the race detector's runtime, a debugger's breakpoints).
	// Those exist only in memory; dropping them would lose the writes.
	anonKB int64
}

// parseMaps reads /proc/<pid>/smaps (or maps): header lines
// "start-end perms offset dev inode [path]", each followed in smaps by
// "Key: value" lines, of which Anonymous is kept.
func parseMaps(b []byte) ([]exeMapping, error) {
	var out []exeMapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 0 {
			continue
		}
		if bytes.HasSuffix(f[0], []byte(":")) {
			if string(f[0]) != "Anonymous:" {
				continue
			}
			if len(out) == 0 || len(f) < 2 {
				return nil, fmt.Errorf("maps line %d: %q outside a mapping", n, sc.Bytes())
			}
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil || kb < 0 {
				return nil, fmt.Errorf("maps line %d: malformed %q", n, sc.Bytes())
			}
			out[len(out)-1].anonKB = kb
			continue
		}
		if len(f) < 5 {
			return nil, fmt.Errorf("maps line %d: %d fields, want at least 5", n, len(f))
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			return nil, fmt.Errorf("maps line %d: address range %q", n, f[0])
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		inode, err3 := strconv.ParseUint(string(f[4]), 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil || end < start || len(f[1]) != 4 {
			return nil, fmt.Errorf("maps line %d: malformed %q", n, sc.Bytes())
		}
		out = append(out, exeMapping{start: uintptr(start), end: uintptr(end),
			perms: string(f[1]), dev: string(f[3]), inode: inode})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read maps: %w", err)
	}
	return out, nil
}

// exeReadOnly picks the read-only mappings of the file that holds pc: the
// code and read-only data of the executable. The writable data segment is
// never included (dropping it would lose the program's globals), nor is any
// anonymous mapping, nor a read-only mapping holding written pages.
func exeReadOnly(maps []exeMapping, pc uintptr) ([]exeMapping, error) {
	var dev string
	var inode uint64
	for _, m := range maps {
		if m.start <= pc && pc < m.end {
			dev, inode = m.dev, m.inode
		}
	}
	if inode == 0 {
		return nil, errNoExecMapping
	}
	var out []exeMapping
	for _, m := range maps {
		if m.inode == inode && m.dev == dev && m.perms[1] != 'w' && m.perms[3] == 'p' && m.anonKB == 0 {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, errNoExecMapping
	}
	return out, nil
}

// releaseExePages drops this process's mappings of its executable's code
// and read-only data (MADV_DONTNEED: private, never-written file pages come
// back from the file on the next access). Mappings holding written pages
// are left alone, and so is everything under a tracer (it may write
// breakpoints at any time).
func releaseExePages() error {
	if traced() {
		return nil
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return fmt.Errorf("release start-up pages: %w", err)
	}
	maps, err := parseMaps(b)
	if err != nil {
		return fmt.Errorf("release start-up pages: %w", err)
	}
	ro, err := exeReadOnly(maps, reflect.ValueOf(releaseExePages).Pointer())
	if err != nil {
		return fmt.Errorf("release start-up pages: %w", err)
	}
	for _, m := range ro {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); e != 0 {
			return fmt.Errorf("release start-up pages: madvise %#x-%#x: %w", m.start, m.end, e)
		}
	}
	return nil
}

// traced reports whether a debugger or tracer is attached.
func traced() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("TracerPid:")); ok {
			return string(bytes.TrimSpace(v)) != "0"
		}
	}
	return false
}
