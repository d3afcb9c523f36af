package main

// Virtual brokers' moves and outages (broker/control_nodes.go,
// docs/virtual-brokers.md).

import (
	"strconv"
)

func init() {
	regCtl(ctlCommand{words: "node list", help: "the node ids this broker serves, up or stopped, with their listeners",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 0 {
				return "", "", nil, errCtlUsage
			}
			return "GET", "nodes", nil, nil
		}})
	regCtl(ctlCommand{words: "node stop", usage: "ID", help: "stop a virtual broker: its leaders and coordinators move, its listener closes",
		build: func(args []string) (string, string, any, error) {
			id, err := ctlInt(args, 1, 0)
			if err != nil {
				return "", "", nil, err
			}
			return "POST", "nodes/" + strconv.Itoa(int(id)) + "/stop", nil, nil
		}})
	regCtl(ctlCommand{words: "node start", usage: "ID", help: "start a stopped virtual broker on its ports again",
		build: func(args []string) (string, string, any, error) {
			id, err := ctlInt(args, 1, 0)
			if err != nil {
				return "", "", nil, err
			}
			return "POST", "nodes/" + strconv.Itoa(int(id)) + "/start", nil, nil
		}})
	regCtl(ctlCommand{words: "leader move", usage: "TOPIC PARTITION NODE", help: "make NODE the leader of a partition",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 3 || args[0] == "" {
				return "", "", nil, errCtlUsage
			}
			p, err := ctlInt(args, 3, 1)
			if err != nil {
				return "", "", nil, err
			}
			n, err := ctlInt(args, 3, 2)
			if err != nil {
				return "", "", nil, err
			}
			return "POST", "leaders/move", map[string]any{"topic": args[0], "partition": p, "node": n}, nil
		}})
	regCtl(ctlCommand{words: "coordinator move", usage: "group|txn|share KEY NODE", help: "move the coordinator of a group, transactional id or share group to NODE",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 3 {
				return "", "", nil, errCtlUsage
			}
			switch args[0] {
			case "group", "txn", "share":
			default:
				return "", "", nil, errCtlUsage
			}
			n, err := ctlInt(args, 3, 2)
			if err != nil {
				return "", "", nil, err
			}
			return "POST", "coordinators/move", map[string]any{"kind": args[0], "key": args[1], "node": n}, nil
		}})
}

// ctlInt parses args[i] as an int32, args having exactly n elements.
func ctlInt(args []string, n, i int) (int32, error) {
	if len(args) != n {
		return 0, errCtlUsage
	}
	v, err := strconv.ParseInt(args[i], 10, 32)
	if err != nil {
		return 0, errCtlUsage
	}
	return int32(v), nil
}
