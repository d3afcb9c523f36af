package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// ErrNoField is returned when /proc/<pid>/status lacks a field.
var ErrNoField = errors.New("field not in status")

// statusKB reads one "Name:   1234 kB" field of /proc/<pid>/status.
func statusKB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read status of %d: %w", pid, err)
	}
	return parseStatusKB(b, field)
}

func parseStatusKB(status []byte, field string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	prefix := []byte(field + ":")
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, prefix) {
			continue
		}
		f := bytes.Fields(line[len(prefix):])
		if len(f) < 1 {
			return 0, fmt.Errorf("%s: %w", field, ErrNoField)
		}
		v, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%s: bad value %q", field, f[0])
		}
		return v, nil
	}
	return 0, fmt.Errorf("%s: %w", field, ErrNoField)
}

// memWatch tracks a process's peak RSS over one workload. The kernel's
// high-water mark (VmHWM) covers the whole process lifetime, so it is reset
// first through clear_refs (value 5, Linux 4.0+); polling VmRSS backs that
// up where the reset is not allowed.
type memWatch struct {
	pid  int
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak int64 // kB
}

func watchMem(pid int) *memWatch {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
	w := &memWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *memWatch) loop() {
	defer close(w.done)
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		w.sample()
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
	}
}

func (w *memWatch) sample() {
	rss, err := statusKB(w.pid, "VmRSS")
	if err != nil {
		return
	}
	w.mu.Lock()
	w.peak = max(w.peak, rss)
	w.mu.Unlock()
}

// Stop ends the watch and returns the peak RSS in MiB.
func (w *memWatch) Stop() float64 {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	peak := w.peak
	w.mu.Unlock()
	if hwm, err := statusKB(w.pid, "VmHWM"); err == nil {
		peak = max(peak, hwm)
	}
	return float64(peak) / 1024
}
