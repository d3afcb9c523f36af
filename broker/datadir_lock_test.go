package broker

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"sharq/config"
)

// TestSecondServerOnDataDir: a second server on the same log.dirs is
// refused with the first one's pid, and may start once the first stopped.
func TestSecondServerOnDataDir(t *testing.T) {
	cfg := config.New()
	cfg.LogDirs = t.TempDir()
	first, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(cfg, nil)
	want := "data dir " + cfg.LogDirs + " is in use by another sharq, pid " + strconv.Itoa(os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second server: %v, want %q", err, want)
	}
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
	again.Shutdown(context.Background())
}
