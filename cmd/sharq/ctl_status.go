package main

func init() {
	regCtl(ctlCommand{words: "status", help: "who the broker is and whether it serves",
		build: func(args []string) (string, string, any, error) {
			if len(args) != 0 {
				return "", "", nil, errCtlUsage
			}
			return "GET", "status", nil, nil
		}})
}
