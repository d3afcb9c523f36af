package schema

// Compatibility levels and modes, and how a level is checked: Confluent's
// CompatibilityChecker and SchemaValidatorBuilder over the one relation a
// Format provides (Parsed.BackwardCompatible: can this schema read data
// written with that one?).
//
//	BACKWARD    the new schema reads data of the latest version
//	FORWARD     the latest version reads data of the new schema
//	FULL        both
//	*_TRANSITIVE the same against every version, newest first, stopping
//	            at the first that fails
//	NONE        no check
//
// Versions of another schema type are incompatible. Deleted versions take
// no part.

import (
	"strconv"
	"strings"
)

const (
	levelNone               = "NONE"
	levelBackward           = "BACKWARD"
	levelBackwardTransitive = "BACKWARD_TRANSITIVE"
	levelForward            = "FORWARD"
	levelForwardTransitive  = "FORWARD_TRANSITIVE"
	levelFull               = "FULL"
	levelFullTransitive     = "FULL_TRANSITIVE"
)

var levels = []string{levelNone, levelBackward, levelBackwardTransitive, levelForward, levelForwardTransitive, levelFull, levelFullTransitive}

// parseLevel is CompatibilityLevel.forName: case-insensitive.
func parseLevel(s string) (string, bool) {
	u := strings.ToUpper(s)
	for _, l := range levels {
		if l == u {
			return l, true
		}
	}
	return "", false
}

// Modes (storage/Mode.java). READONLY_OVERRIDE is Confluent's deprecated
// read-only mode that also overrides subject modes; FORWARD is IMPORT for
// schema exporters, global only.
const (
	modeReadWrite        = "READWRITE"
	modeReadOnly         = "READONLY"
	modeReadOnlyOverride = "READONLY_OVERRIDE"
	modeImport           = "IMPORT"
	modeForward          = "FORWARD"
)

var modes = []string{modeReadWrite, modeReadOnly, modeReadOnlyOverride, modeImport, modeForward}

func importLike(mode string) bool { return mode == modeImport || mode == modeForward }

func readOnly(mode string) bool { return mode == modeReadOnly || mode == modeReadOnlyOverride }

// prior is one earlier version taking part in a check.
type prior struct {
	parsed  Parsed
	typ     string
	version int32
	text    string
}

const (
	differentSchemaType = "Incompatible because of different schema type"
	maxSchemaForMessage = 10 * 1024
)

// checkLevel returns why next is not compatible at level with prev
// (chronological, deleted versions left out); none when it is.
func checkLevel(level, typ string, next Parsed, prev []prior) []string {
	if level == levelNone || len(prev) == 0 {
		return nil
	}
	transitive := strings.HasSuffix(level, "_TRANSITIVE")
	base := strings.TrimSuffix(level, "_TRANSITIVE")
	for i := len(prev) - 1; i >= 0; i-- {
		p := prev[i]
		var msgs []string
		if p.typ != typ {
			msgs = []string{differentSchemaType}
		} else {
			switch base {
			case levelBackward:
				msgs = formatMessages(next.BackwardCompatible(p.parsed), p, "new", "old", true)
			case levelForward:
				msgs = formatMessages(p.parsed.BackwardCompatible(next), p, "old", "new", true)
			case levelFull:
				msgs = formatMessages(p.parsed.BackwardCompatible(next), p, "old", "new", false)
				msgs = append(msgs, formatMessages(next.BackwardCompatible(p.parsed), p, "new", "old", true)...)
			}
		}
		if !transitive || len(msgs) > 0 {
			return msgs
		}
	}
	return nil
}

// formatMessages is SchemaValidatorBuilder.formatErrorMessages: a Format's
// message names the reader and the writer with %s placeholders, as
// Confluent's checkers do (FillRoles); then the old schema's version and
// text follow.
func formatMessages(msgs []string, p prior, reader, writer string, appendSchema bool) []string {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]string, 0, len(msgs)+2)
	for _, m := range msgs {
		out = append(out, FillRoles(m, reader, writer))
	}
	if appendSchema {
		if p.version > 0 {
			out = append(out, "{oldSchemaVersion: "+strconv.Itoa(int(p.version))+"}")
		}
		if len(p.text) <= maxSchemaForMessage {
			out = append(out, "{oldSchema: '"+p.text+"'}")
		} else {
			out = append(out, "{oldSchema: <truncated> '"+p.text[:maxSchemaForMessage]+"...'}")
		}
	}
	return out
}
