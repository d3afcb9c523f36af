//go:build !unix

package log

// FileLimit returns 0 (unknown) where RLIMIT_NOFILE does not exist.
func FileLimit() uint64 { return 0 }
