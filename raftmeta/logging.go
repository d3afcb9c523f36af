package raftmeta

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/cockroachdb/pebble"
	"github.com/hashicorp/go-hclog"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// hclogAdapter sends hashicorp/raft's logs to slog. raft logs every
// election and state change at Info; for a broker that is noise, so Info
// becomes Debug and only Warn/Error keep their level.
//
// The embedded null logger supplies StandardLogger/StandardWriter, which
// raft does not use; implementing them here would import the stdlib "log"
// package, which this project avoids.
type hclogAdapter struct {
	hclog.Logger
	l       *slog.Logger
	name    string
	implied []any
	// expected lists messages raft logs at Warn that are routine here (a
	// lone voter "times out" on every start); they go to Debug.
	expected map[string]bool
}

func newHCLog(l *slog.Logger, expected ...string) hclog.Logger {
	h := &hclogAdapter{Logger: hclog.NewNullLogger(), l: l, expected: map[string]bool{}}
	for _, m := range expected {
		h.expected[m] = true
	}
	return h
}

func (h *hclogAdapter) slogLevel(level hclog.Level) slog.Level {
	switch level {
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	case hclog.Trace:
		return slog.LevelDebug - 4
	default: // Info, Debug, NoLevel
		return slog.LevelDebug
	}
}

func (h *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	lvl := h.slogLevel(level)
	if h.expected[msg] && lvl > slog.LevelDebug {
		lvl = slog.LevelDebug
	}
	ctx := context.Background()
	if !h.l.Enabled(ctx, lvl) {
		return
	}
	attrs := make([]any, 0, len(h.implied)+len(args)+2)
	if h.name != "" {
		attrs = append(attrs, "raft_component", h.name)
	}
	attrs = append(attrs, h.implied...)
	for i := 0; i < len(args); i += 2 {
		if i+1 == len(args) {
			attrs = append(attrs, "extra", fmt.Sprint(args[i]))
			break
		}
		// hclog values are often fmt.Stringer (ServerID, *Raft); render them
		// now so a JSON handler does not reflect over raft internals.
		k := fmt.Sprint(args[i])
		switch v := args[i+1].(type) {
		case string, int, int64, uint64, int32, uint32, bool, error:
			attrs = append(attrs, k, v)
		default:
			attrs = append(attrs, k, fmt.Sprint(v))
		}
	}
	h.l.Log(ctx, lvl, msg, attrs...)
}

func (h *hclogAdapter) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }
func (h *hclogAdapter) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }
func (h *hclogAdapter) Info(msg string, args ...any)  { h.Log(hclog.Info, msg, args...) }
func (h *hclogAdapter) Warn(msg string, args ...any)  { h.Log(hclog.Warn, msg, args...) }
func (h *hclogAdapter) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

func (h *hclogAdapter) enabled(level hclog.Level) bool {
	return h.l.Enabled(context.Background(), h.slogLevel(level))
}

func (h *hclogAdapter) IsTrace() bool { return h.enabled(hclog.Trace) }
func (h *hclogAdapter) IsDebug() bool { return h.enabled(hclog.Debug) }
func (h *hclogAdapter) IsInfo() bool  { return h.enabled(hclog.Info) }
func (h *hclogAdapter) IsWarn() bool  { return h.enabled(hclog.Warn) }
func (h *hclogAdapter) IsError() bool { return h.enabled(hclog.Error) }

func (h *hclogAdapter) ImpliedArgs() []any { return h.implied }

func (h *hclogAdapter) With(args ...any) hclog.Logger {
	c := *h
	c.implied = append(append([]any(nil), h.implied...), args...)
	return &c
}

func (h *hclogAdapter) Name() string { return h.name }

func (h *hclogAdapter) Named(name string) hclog.Logger {
	c := *h
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (h *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *h
	c.name = name
	return &c
}

// SetLevel is a no-op: the slog handler owns the level.
func (h *hclogAdapter) SetLevel(hclog.Level) {}

func (h *hclogAdapter) GetLevel() hclog.Level {
	switch {
	case h.IsTrace():
		return hclog.Trace
	case h.IsDebug():
		return hclog.Debug
	case h.IsWarn():
		return hclog.Warn
	case h.IsError():
		return hclog.Error
	}
	return hclog.Off
}

func (h *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer { return io.Discard }

// pebbleLogger adapts pebble's printf logger. pebble calls Fatalf on broken
// invariants and does not expect it to return.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "source", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "source", "pebble")
	panic("raftmeta: pebble fatal: " + msg)
}

// pebbleEvents logs the pebble events an operator must see.
func pebbleEvents(l *slog.Logger) *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			l.Error("raft log store background error", "err", err)
		},
		DiskSlow: func(info pebble.DiskSlowInfo) {
			l.Warn("raft log store disk slow", "path", info.Path, "op", info.OpType.String(), "duration", info.Duration)
		},
		WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
			l.Warn("raft log store write stall", "reason", info.Reason)
		},
		WriteStallEnd: func() {
			l.Info("raft log store write stall ended")
		},
	}
}
