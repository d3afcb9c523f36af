package broker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dataDirLockName is the lock file in log.dirs: a second sharq on the same
// directory would corrupt both, so the first holds an exclusive flock on it
// (released by the kernel if the process dies) and writes its pid there so
// the second can say who has it.
const dataDirLockName = ".lock"

type dataDirLock struct{ f *os.File }

func lockDataDir(dir string) (*dataDirLock, error) {
	path := filepath.Join(dir, dataDirLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := "unknown"
			if b, rerr := os.ReadFile(path); rerr == nil && strings.TrimSpace(string(b)) != "" {
				pid = strings.TrimSpace(string(b))
			}
			return nil, fmt.Errorf("data dir %s is in use by another sharq, pid %s", dir, pid)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dataDirLock{f: f}, nil
}

// release unlocks; the file stays (removing it would race a new owner).
func (l *dataDirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}
