package share

// Holds reports whether member has any offset Acquired here. It costs one
// pass over the ranges (a handful in steady state); the broker asks only
// when a ShareFetch is about to park.
func (p *SharePartition) Holds(member string) bool {
	for k := range p.ranges {
		if r := &p.ranges[k]; r.state == Acquired && r.owner == member {
			return true
		}
	}
	return false
}
