//go:build unix

package log

import "syscall"

// FileLimit returns the soft RLIMIT_NOFILE (Go raises it to the hard limit
// at start), or 0 if unknown.
func FileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return r.Cur
}
