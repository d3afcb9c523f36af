package jsonschema

import (
	"sort"
	"strconv"

	"sharq/schema/internal/jsontree"
)

// compareArray is Confluent's ArraySchemaDiff.
func compareArray(ctx *diffCtx, o, u *jnode) {
	ctx.enter("items")
	compare(ctx, o.allItems, u.allItems)
	ctx.leave()
	compareTuple(ctx, o, u)
	compareAdditionalItems(ctx, o, u)
	compareUnevaluated(ctx, "unevaluatedItems", o.unevalItems, u.unevalItems,
		unevaluatedItemsAdded, unevaluatedItemsRemoved, unevaluatedItemsExtended, unevaluatedItemsNarrowed)
	limit(ctx, "maxItems", o.maxItems, u.maxItems, maxItemsAdded, maxItemsRemoved, maxItemsIncreased, maxItemsDecreased)
	limit(ctx, "minItems", o.minItems, u.minItems, minItemsAdded, minItemsRemoved, minItemsIncreased, minItemsDecreased)
	if o.uniqueItems != u.uniqueItems {
		if o.uniqueItems {
			ctx.addAt("uniqueItems", uniqueItemsRemoved)
		} else {
			ctx.addAt("uniqueItems", uniqueItemsAdded)
		}
	}
	limit(ctx, "maxContains", o.maxContains, u.maxContains, maxContainsAdded, maxContainsRemoved, maxContainsIncreased, maxContainsDecreased)
	limit(ctx, "minContains", o.minContains, u.minContains, minContainsAdded, minContainsRemoved, minContainsIncreased, minContainsDecreased)
}

func openItems(n *jnode) bool {
	return n.addItems && n.addItemsSch == nil && (n.unevalItems == nil || isEmpty(n.unevalItems))
}

func partialItems(n *jnode) *jnode {
	if n.addItemsSch != nil {
		return n.addItemsSch
	}
	if n.addItems && n.unevalItems != nil && n.unevalItems.kind != kFalse && !isEmpty(n.unevalItems) {
		return n.unevalItems
	}
	return nil
}

// compareTuple compares positional item schemas, an item beyond the
// other's tuple against its content model.
func compareTuple(ctx *diffCtx, o, u *jnode) {
	for i := 0; i < len(o.itemSchemas) || i < len(u.itemSchemas); i++ {
		ctx.enter("items/" + strconv.Itoa(i))
		switch {
		case i < len(o.itemSchemas) && i < len(u.itemSchemas):
			compare(ctx, o.itemSchemas[i], u.itemSchemas[i])
		case i < len(o.itemSchemas):
			os := o.itemSchemas[i]
			if openItems(u) {
				ctx.add(itemRemovedFromOpen)
			} else if partial := partialItems(u); partial != nil {
				sub := ctx.sub()
				compare(sub, os, partial)
				ctx.diffs = append(ctx.diffs, sub.diffs...)
				if sub.isCompatible() {
					ctx.add(itemRemovedCoveredByPartial)
				} else {
					ctx.add(itemRemovedNotCoveredByPartial)
				}
			} else if os.kind == kFalse {
				ctx.add(itemWithFalseRemovedFromClosed)
			} else {
				ctx.add(itemRemovedFromClosed)
			}
		default:
			us := u.itemSchemas[i]
			if openItems(o) {
				if isEmpty(us) {
					ctx.add(itemWithEmptySchemaAddedToOpen)
				} else {
					ctx.add(itemAddedToOpen)
				}
			} else if partial := partialItems(o); partial != nil {
				sub := ctx.sub()
				compare(sub, partial, us)
				ctx.diffs = append(ctx.diffs, sub.diffs...)
				if sub.isCompatible() {
					ctx.add(itemAddedCoveredByPartial)
				} else {
					ctx.add(itemAddedNotCoveredByPartial)
				}
			} else {
				ctx.add(itemAddedToClosed)
			}
		}
		ctx.leave()
	}
}

func compareAdditionalItems(ctx *diffCtx, o, u *jnode) {
	ctx.enter("additionalItems")
	defer ctx.leave()
	switch {
	case o.addItems != u.addItems:
		if o.addItems {
			ctx.add(additionalItemsRemoved)
		} else {
			ctx.add(additionalItemsAdded)
		}
	case o.addItemsSch == nil && u.addItemsSch != nil:
		ctx.add(additionalItemsNarrowed)
	case u.addItemsSch == nil && o.addItemsSch != nil:
		ctx.add(additionalItemsExtended)
	default:
		compare(ctx, o.addItemsSch, u.addItemsSch)
	}
}

// compareCombined is CombinedSchemaDiff: the criteria, the number of
// distinct subschemas, then a maximum matching of each original subschema
// to an update subschema it is compatible with.
func compareCombined(ctx *diffCtx, o, u *jnode) {
	if t := compareCriteria(ctx, o, u); t == combinedTypeChanged {
		return
	}
	os, us := distinct(o.subs), distinct(u.subs)
	switch {
	case len(os) < len(us):
		if u.criterion == "allOf" {
			ctx.add(productTypeExtended)
		} else {
			ctx.add(sumTypeExtended)
		}
	case len(os) > len(us):
		if o.criterion == "anyOf" || o.criterion == "oneOf" {
			ctx.add(sumTypeNarrowed)
		} else {
			ctx.add(productTypeNarrowed)
		}
	}
	edges := make([][]int, len(os))
	diffs := make(map[[2]int][]difference)
	for i, a := range os {
		ctx.enter(o.criterion + "/" + strconv.Itoa(i))
		for j, b := range us {
			sub := ctx.sub()
			compare(sub, a, b)
			if sub.isCompatible() {
				edges[i] = append(edges[i], j)
				diffs[[2]int{i, j}] = sub.diffs
			}
		}
		ctx.leave()
	}
	match := maxMatching(edges, len(us))
	matched := 0
	for i, j := range match {
		if j >= 0 {
			matched++
			ctx.diffs = append(ctx.diffs, diffs[[2]int{i, j}]...)
		}
	}
	if matched < min(len(os), len(us)) {
		ctx.add(combinedTypeSubschemasChanged)
	}
}

func compareCriteria(ctx *diffCtx, o, u *jnode) change {
	if o.criterion == u.criterion {
		return ""
	}
	t := combinedTypeChanged
	single := func(n *jnode) bool { return len(n.subs) == 1 }
	if u.criterion == "anyOf" || single(o) && single(u) || single(o) && u.criterion == "oneOf" || single(u) && o.criterion == "allOf" {
		t = combinedTypeExtended
	}
	ctx.add(t)
	return t
}

// distinct drops repeated subschemas (Confluent collects them into a set
// of JsonSchema, equal by their JSON).
func distinct(subs []*jnode) []*jnode {
	seen := make(map[string]bool, len(subs))
	var out []*jnode
	for _, s := range subs {
		key := ""
		if s.src != nil {
			key = jsontree.Compact(jsontree.Sorted(s.src), jsontree.Decimals)
		}
		if key != "" && seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, s)
	}
	return out
}

// maxMatching is a maximum bipartite matching (augmenting paths): for each
// left vertex the right vertex it is matched to, or -1.
func maxMatching(edges [][]int, right int) []int {
	matchL := make([]int, len(edges))
	matchR := make([]int, right)
	for i := range matchL {
		matchL[i] = -1
	}
	for j := range matchR {
		matchR[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for _, j := range edges[i] {
			if seen[j] {
				continue
			}
			seen[j] = true
			if matchR[j] < 0 || try(matchR[j], seen) {
				matchL[i], matchR[j] = j, i
				return true
			}
		}
		return false
	}
	order := make([]int, len(edges))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(edges[order[a]]) < len(edges[order[b]]) })
	for _, i := range order {
		try(i, make([]bool, right))
	}
	return matchL
}
