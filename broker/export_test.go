package broker

import "sharq/share"

// ShareManager exposes a server's share groups to the franz-go tests of
// package broker_test (e.g. to wait until consumers are parked).
func ShareManager(s *Server) *share.Manager { return s.share }
