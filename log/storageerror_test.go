package log

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestStorageErrorKeepsCause: a failure a lower step already wrapped as
// ErrStorage keeps its cause when the log wraps it again. It used to be
// stripped with errors.Unwrap, which answers nil for an error built with two
// %w, so the log said "%!w(<nil>)" where the disk had said ENOSPC.
func TestStorageErrorKeepsCause(t *testing.T) {
	l := &Log{topic: "t", partition: 3}
	inner := l.storageError("write index of sealed segment", syscall.ENOSPC)
	for _, err := range []error{inner, l.storageError("fsync sealed segment", inner)} {
		if !errors.Is(err, ErrStorage) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("%v: want ErrStorage wrapping ENOSPC", err)
		}
		if msg := err.Error(); strings.Contains(msg, "%!w") || strings.Count(msg, ErrStorage.Error()) != 1 {
			t.Fatalf("message %q: want the cause once, ErrStorage once", msg)
		}
	}
}
