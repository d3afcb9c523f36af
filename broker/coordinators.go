package broker

// Coordinators (consumer groups, share groups) and the state store they
// share (<log.dirs>/state, pebble) are opened after the metadata store and
// the partition logs, and closed before them. The hooks are called by New
// and closeStores; each coordinator package adds its part here.

// openCoordinators opens the group state store and the coordinators.
func (s *Server) openCoordinators() error { return nil }

// closeCoordinators flushes and closes what openCoordinators opened.
func (s *Server) closeCoordinators() error { return nil }
