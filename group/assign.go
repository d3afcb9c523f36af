package group

import (
	"sort"
)

// partKey is one partition of a topic by id.
type partKey struct {
	Topic     TopicID
	Partition int32
}

// partSet is a set of partitions.
type partSet map[partKey]struct{}

func (s partSet) clone() partSet {
	out := make(partSet, len(s))
	for k := range s {
		out[k] = struct{}{}
	}
	return out
}

// toMap returns the set as topic id -> sorted partitions.
func (s partSet) toMap() map[TopicID][]int32 {
	out := map[TopicID][]int32{}
	for k := range s {
		out[k.Topic] = append(out[k.Topic], k.Partition)
	}
	for _, ps := range out {
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	}
	return out
}

func fromMap(m map[TopicID][]int32) partSet {
	out := partSet{}
	for t, ps := range m {
		for _, p := range ps {
			out[partKey{t, p}] = struct{}{}
		}
	}
	return out
}

// assignMember is one member as an assignor sees it.
type assignMember struct {
	id     string
	topics map[string]bool // subscribed topic names (regex already resolved)
	prev   partSet         // current target, for stickiness
}

// Assignor names.
const (
	AssignorUniform = "uniform"
	AssignorRange   = "range"
)

type assignorFunc func(members []assignMember, topics map[string]TopicInfo) map[string]partSet

var assignors = map[string]assignorFunc{AssignorUniform: assignUniform, AssignorRange: assignRange}

// sortedSubscribed lists the existing topics any member subscribes to, by
// name.
func sortedSubscribed(members []assignMember, topics map[string]TopicInfo) []string {
	seen := map[string]bool{}
	var names []string
	for _, m := range members {
		for t := range m.topics {
			if _, ok := topics[t]; ok && !seen[t] {
				seen[t] = true
				names = append(names, t)
			}
		}
	}
	sort.Strings(names)
	return names
}

// assignUniform spreads partitions evenly, keeping partitions where they
// are when that does not unbalance the group: previous owners keep their
// partitions, the rest go to the least loaded subscribed member, then
// partitions move from members with at least two more than another
// eligible member until no such move exists.
func assignUniform(members []assignMember, topics map[string]TopicInfo) map[string]partSet {
	sort.Slice(members, func(i, j int) bool { return members[i].id < members[j].id })
	out := make(map[string]partSet, len(members))
	counts := map[string]int{}
	for _, m := range members {
		out[m.id] = partSet{}
	}
	type part struct {
		key   partKey
		cands []string
	}
	var parts []part
	for _, name := range sortedSubscribed(members, topics) {
		ti := topics[name]
		var cands []string
		for _, m := range members {
			if m.topics[name] {
				cands = append(cands, m.id)
			}
		}
		for p := int32(0); p < ti.Partitions; p++ {
			parts = append(parts, part{partKey{ti.ID, p}, cands})
		}
	}
	owner := make([]string, len(parts))
	prevOwner := map[partKey]string{}
	for _, m := range members {
		for k := range m.prev {
			prevOwner[k] = m.id
		}
	}
	for i, p := range parts {
		if o, ok := prevOwner[p.key]; ok && contains(p.cands, o) {
			owner[i] = o
			counts[o]++
		}
	}
	minCand := func(cands []string) string {
		best := ""
		for _, c := range cands {
			if best == "" || counts[c] < counts[best] {
				best = c
			}
		}
		return best
	}
	for i, p := range parts {
		if owner[i] == "" {
			owner[i] = minCand(p.cands)
			counts[owner[i]]++
		}
	}
	for round := 0; round < len(parts)+len(members)+1; round++ {
		moved := false
		for i, p := range parts {
			a := owner[i]
			b := minCand(p.cands)
			if b != "" && counts[b]+1 < counts[a] {
				owner[i] = b
				counts[a]--
				counts[b]++
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	for i, p := range parts {
		out[owner[i]][p.key] = struct{}{}
	}
	return out
}

// assignRange gives each subscribed member a contiguous range of every
// topic, members in id order, the first ones one partition more when the
// count does not divide.
func assignRange(members []assignMember, topics map[string]TopicInfo) map[string]partSet {
	sort.Slice(members, func(i, j int) bool { return members[i].id < members[j].id })
	out := make(map[string]partSet, len(members))
	for _, m := range members {
		out[m.id] = partSet{}
	}
	for _, name := range sortedSubscribed(members, topics) {
		ti := topics[name]
		var subs []string
		for _, m := range members {
			if m.topics[name] {
				subs = append(subs, m.id)
			}
		}
		n, k := int(ti.Partitions), len(subs)
		next := 0
		for i, id := range subs {
			cnt := n / k
			if i < n%k {
				cnt++
			}
			for j := 0; j < cnt; j++ {
				out[id][partKey{ti.ID, int32(next)}] = struct{}{}
				next++
			}
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
