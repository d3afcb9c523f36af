package main

// sharq ctl fault ...: the fault rules of the control API (docs/faults.md).

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

func init() {
	regCtl(ctlCommand{words: "fault add", usage: "RULE", help: `add a fault rule (JSON, e.g. '{"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","count":3}')`,
		build: func(args []string) (string, string, any, error) {
			if len(args) != 1 {
				return "", "", nil, errCtlUsage
			}
			var rule json.RawMessage
			if err := json.Unmarshal([]byte(args[0]), &rule); err != nil {
				return "", "", nil, fmt.Errorf("RULE is not JSON: %w", err)
			}
			return "POST", "faults", rule, nil
		}})
	regCtl(ctlCommand{words: "fault list", help: "every fault rule with its hits",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 0 {
				return "", "", nil, errCtlUsage
			}
			return "GET", "faults", nil, nil
		}})
	regCtl(ctlCommand{words: "fault rm", usage: "ID", help: "remove a fault rule",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 1 {
				return "", "", nil, errCtlUsage
			}
			if _, err := strconv.ParseInt(args[0], 10, 64); err != nil {
				return "", "", nil, fmt.Errorf("ID %q is not a number", args[0])
			}
			return "DELETE", "faults/" + args[0], nil, nil
		}})
	regCtl(ctlCommand{words: "fault wait", usage: "ID HITS [TIMEOUT]", help: "wait until a fault rule has HITS hits (TIMEOUT e.g. 10s, default 25s; raise --timeout above it)",
		build: func(args []string) (string, string, any, error) {
			if len(args) < 2 || len(args) > 3 {
				return "", "", nil, errCtlUsage
			}
			if _, err := strconv.ParseInt(args[0], 10, 64); err != nil {
				return "", "", nil, fmt.Errorf("ID %q is not a number", args[0])
			}
			if _, err := strconv.ParseInt(args[1], 10, 64); err != nil {
				return "", "", nil, fmt.Errorf("HITS %q is not a number", args[1])
			}
			q := url.Values{"hits": {args[1]}}
			if len(args) == 3 {
				d, err := time.ParseDuration(args[2])
				if err != nil || d < 0 {
					return "", "", nil, fmt.Errorf("TIMEOUT %q is not a duration such as 10s", args[2])
				}
				q.Set("timeout_ms", strconv.FormatInt(d.Milliseconds(), 10))
			}
			return "GET", "faults/" + args[0] + "/wait?" + q.Encode(), nil, nil
		}})
}
