package main

// sharq ctl share ...: share-group faults (docs/faults.md).

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

func init() {
	partFault := func(verb, help string, withError bool) {
		usage := "GROUP TOPIC PARTITION [OFFSETS]"
		if withError {
			usage += " [ERROR]"
		}
		regCtl(ctlCommand{words: "share " + verb, usage: usage, help: help,
			build: func(args []string) (string, string, any, error) {
				max := 4
				if withError {
					max = 5
				}
				if len(args) < 3 || len(args) > max {
					return "", "", nil, errCtlUsage
				}
				p, err := strconv.ParseInt(args[2], 10, 32)
				if err != nil || p < 0 {
					return "", "", nil, fmt.Errorf("PARTITION %q is not a partition number", args[2])
				}
				body := map[string]any{"topic": args[1], "partition": p}
				if len(args) >= 4 && args[3] != "all" {
					offs, err := parseOffsets(args[3])
					if err != nil {
						return "", "", nil, err
					}
					body["offsets"] = offs
				}
				if len(args) == 5 {
					body["error"] = args[4]
				}
				return "POST", "share/groups/" + url.PathEscape(args[0]) + "/" + verb, body, nil
			}})
	}
	partFault("expire-locks", "expire the acquisition locks of OFFSETS (e.g. 3,7-9; default all) now", false)
	partFault("redeliver", "release the acquired OFFSETS (default all) for redelivery now, whoever holds them", false)
	partFault("fail-ack", "fail the next acknowledgement of OFFSETS (default any) with ERROR (default INVALID_RECORD_STATE)", true)
	regCtl(ctlCommand{words: "share evict", usage: "GROUP MEMBER", help: "evict a member's share session (its records are released)",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 2 {
				return "", "", nil, errCtlUsage
			}
			return "POST", "share/groups/" + url.PathEscape(args[0]) + "/members/" + url.PathEscape(args[1]) + "/evict", nil, nil
		}})
	regCtl(ctlCommand{words: "share fail-dlq", usage: "GROUP N", help: "fail the next N dead-letter writes of GROUP",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 2 {
				return "", "", nil, errCtlUsage
			}
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 {
				return "", "", nil, fmt.Errorf("N %q is not a count", args[1])
			}
			return "POST", "share/groups/" + url.PathEscape(args[0]) + "/fail-dlq", map[string]any{"count": n}, nil
		}})
	regCtl(ctlCommand{words: "share faults", help: "the share-group faults injected so far",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 0 {
				return "", "", nil, errCtlUsage
			}
			return "GET", "share/faults", nil, nil
		}})
}

// maxCtlOffsets bounds what OFFSETS expands to.
const maxCtlOffsets = 1 << 20

// parseOffsets reads "3,7-9" as 3 7 8 9.
func parseOffsets(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		first, err := strconv.ParseInt(a, 10, 64)
		last := first
		if err == nil && isRange {
			last, err = strconv.ParseInt(b, 10, 64)
		}
		if err != nil || first < 0 || last < first {
			return nil, fmt.Errorf("OFFSETS %q: want offsets and ranges such as 3,7-9", s)
		}
		if last-first+1+int64(len(out)) > maxCtlOffsets {
			return nil, fmt.Errorf("OFFSETS %q: more than %d offsets", s, maxCtlOffsets)
		}
		for o := first; o <= last; o++ {
			out = append(out, o)
		}
	}
	return out, nil
}
