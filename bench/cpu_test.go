package main

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// Fields after the name: state ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime stime ...
	tests := []struct {
		name    string
		stat    string
		want    time.Duration
		wantErr bool
	}{
		{name: "plain", stat: "1234 (sharq) S 1 1234 1234 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 8 0",
			want: 3250 * time.Millisecond},
		{name: "name with spaces and parentheses", stat: "77 (java (main) x) R 1 77 77 0 -1 0 1 2 3 4 1000 1 0 0",
			want: 10010 * time.Millisecond},
		{name: "zero", stat: "5 (kfake) S 1 5 5 0 -1 0 0 0 0 0 0 0 0 0", want: 0},
		{name: "no name", stat: "5 kfake S 1 5 5 0 -1 0 0 0 0 0 0 0 0 0", wantErr: true},
		{name: "truncated", stat: "5 (kfake) S 1 5 5 0 -1 0 0 0 0 0 7", wantErr: true},
		{name: "not a number", stat: "5 (kfake) S 1 5 5 0 -1 0 0 0 0 0 x 1 0 0", wantErr: true},
		{name: "negative", stat: "5 (kfake) S 1 5 5 0 -1 0 0 0 0 0 -3 1 0 0", wantErr: true},
		{name: "empty", stat: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tt.stat))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseStatCPU = %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseStatCPU: %v", err)
			}
			if got != tt.want {
				t.Fatalf("parseStatCPU = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCPUTimeGrows reads this test process's own CPU time around some work:
// the figure is readable and does not go backwards, and busy work shows.
func TestCPUTimeGrows(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatalf("cpuTime: %v", err)
	}
	deadline := before + 50*time.Millisecond
	x := 0
	for {
		for i := 0; i < 1_000_000; i++ {
			x += i
		}
		now, err := cpuTime(os.Getpid())
		if err != nil {
			t.Fatalf("cpuTime: %v", err)
		}
		if now < before {
			t.Fatalf("CPU time went back from %v to %v", before, now)
		}
		if now >= deadline {
			break
		}
	}
	_ = x
}
