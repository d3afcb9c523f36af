package group

import "sort"

// taskKey is one task: a subtopology and a partition.
type taskKey struct {
	sub  string
	part int32
}

// taskSet is a set of tasks.
type taskSet map[taskKey]struct{}

func (s taskSet) has(k taskKey) bool { _, ok := s[k]; return ok }

func (s taskSet) clone() taskSet {
	out := make(taskSet, len(s))
	for k := range s {
		out[k] = struct{}{}
	}
	return out
}

func (s taskSet) equal(o taskSet) bool {
	if len(s) != len(o) {
		return false
	}
	for k := range s {
		if !o.has(k) {
			return false
		}
	}
	return true
}

// toMap is the wire shape: partitions by subtopology, sorted.
func (s taskSet) toMap() map[string][]int32 {
	out := map[string][]int32{}
	for k := range s {
		out[k.sub] = append(out[k.sub], k.part)
	}
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	}
	return out
}

func taskSetFrom(m map[string][]int32) taskSet {
	out := taskSet{}
	for sub, ps := range m {
		for _, p := range ps {
			out[taskKey{sub, p}] = struct{}{}
		}
	}
	return out
}

// streamsTarget is a member's target assignment.
type streamsTarget struct {
	active, standby taskSet
}

// streamsAssignMember is what the assignor knows of a member.
type streamsAssignMember struct {
	id, process string
	// prevActive/prevStandby are what the member holds or was last given:
	// the assignor keeps tasks where they are when balance allows.
	prevActive, prevStandby taskSet
}

// assignStreamsSticky is the broker-side task assignor (Kafka's default is
// "sticky"): every active task to exactly one member, balanced so that
// member loads differ by at most one, keeping a task with its previous
// owner whenever that keeps the balance; then numStandby standby replicas
// of each task on members of other processes than the task's active one
// (and than each other), preferring previous standby holders and the
// least loaded members. Deterministic: members and tasks are visited in
// sorted order.
func assignStreamsSticky(members []streamsAssignMember, tasks map[string]int32, numStandby int) map[string]streamsTarget {
	out := make(map[string]streamsTarget, len(members))
	if len(members) == 0 {
		return out
	}
	sort.Slice(members, func(i, j int) bool { return members[i].id < members[j].id })
	for _, m := range members {
		out[m.id] = streamsTarget{active: taskSet{}, standby: taskSet{}}
	}
	// Tasks in partition order, then subtopology: 0_0, 1_0, 0_1, 1_1, ...
	// so that a member keeping its share keeps a slice of every
	// subtopology, as Kafka's sticky assignor ends up doing.
	var all []taskKey
	for s, n := range tasks {
		for p := int32(0); p < n; p++ {
			all = append(all, taskKey{s, p})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].part != all[j].part {
			return all[i].part < all[j].part
		}
		return all[i].sub < all[j].sub
	})
	n, k := len(all), len(members)
	floor, extra := n/k, n%k // extra members may hold floor+1
	load := map[string]int{}
	assigned := taskSet{}
	// Pass 1: previous owners keep up to floor tasks; pass 2: up to
	// floor+1 while members at floor+1 are still allowed.
	for pass := 0; pass < 2; pass++ {
		for _, t := range all {
			if assigned.has(t) {
				continue
			}
			for _, m := range members {
				if !m.prevActive.has(t) {
					continue
				}
				limit := floor
				if pass == 1 && extra > 0 {
					limit = floor + 1
				}
				if load[m.id] < limit {
					out[m.id].active[t] = struct{}{}
					assigned[t] = struct{}{}
					load[m.id]++
					if load[m.id] == floor+1 {
						extra--
					}
				}
				break
			}
		}
	}
	// The rest go to the least loaded member (ties: the member id order),
	// subtopology by subtopology, so that each member gets a share of
	// every subtopology rather than all of one.
	bySub := append([]taskKey(nil), all...)
	sort.Slice(bySub, func(i, j int) bool {
		if bySub[i].sub != bySub[j].sub {
			return bySub[i].sub < bySub[j].sub
		}
		return bySub[i].part < bySub[j].part
	})
	for _, t := range bySub {
		if assigned.has(t) {
			continue
		}
		best := ""
		for _, m := range members {
			if best == "" || load[m.id] < load[best] {
				best = m.id
			}
		}
		out[best].active[t] = struct{}{}
		assigned[t] = struct{}{}
		load[best]++
	}
	if numStandby <= 0 {
		return out
	}
	process := map[string]string{}
	prevStandby := map[string]taskSet{}
	for _, m := range members {
		process[m.id] = m.process
		prevStandby[m.id] = m.prevStandby
	}
	owner := map[taskKey]string{}
	for id, tg := range out {
		for t := range tg.active {
			owner[t] = id
		}
	}
	for _, t := range all {
		used := map[string]bool{process[owner[t]]: true}
		for r := 0; r < numStandby; r++ {
			best := ""
			for _, m := range members {
				if used[m.process] {
					continue
				}
				switch {
				case best == "":
					best = m.id
				case m.prevStandby.has(t) && !prevStandby[best].has(t):
					best = m.id
				case m.prevStandby.has(t) == prevStandby[best].has(t) && load[m.id] < load[best]:
					best = m.id
				}
			}
			if best == "" {
				break // fewer processes than replicas: Kafka assigns what fits
			}
			out[best].standby[t] = struct{}{}
			used[process[best]] = true
			load[best]++
		}
	}
	return out
}
