package interop

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd if the test process dies first
// (a go test timeout, a crash), so no broker JVM outlives its test.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
