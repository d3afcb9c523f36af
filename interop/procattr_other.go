//go:build !linux

package interop

import "os/exec"

// dieWithParent is a no-op where there is no parent-death signal; the
// brokers are still stopped by the tests' cleanups.
func dieWithParent(cmd *exec.Cmd) {}
