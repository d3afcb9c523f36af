package jsonschema

import (
	"math/big"
	"strings"

	"sharq/schema/internal/jsontree"
)

// diffCtx is Confluent's json.diff.Context: the path being compared, the
// differences found, and the memo shared by the whole comparison.
type diffCtx struct {
	compatible map[change]bool
	sh         *shared
	path       []string
	diffs      []difference
}

type pair [2]*jnode

type shared struct {
	memo       map[pair][]difference
	inProgress map[pair]bool
	seed       map[pair][]difference
	optimism   bool
	// pairs counts the pairs compared over every pass; past maxPairs the
	// comparison stops (Confluent cancels it with the request's timeout
	// instead).
	pairs *int
}

// maxPairs bounds the work of one comparison: nested combined schemas
// compare every subschema with every other, and a hostile pair of schemas
// must not hold the registry for minutes. A variable for the test.
var maxPairs = 100000

// errTooComplex is what BackwardCompatible answers past maxPairs.
const errTooComplex = "the schemas are too complex to compare (more than 100000 pairs of subschemas)"

func (c *diffCtx) sub() *diffCtx {
	return &diffCtx{compatible: c.compatible, sh: c.sh, path: append([]string(nil), c.path...)}
}

func (c *diffCtx) pathString() string { return "#/" + strings.Join(c.path, "/") }

func (c *diffCtx) add(t change) { c.diffs = append(c.diffs, difference{t, c.pathString()}) }

func (c *diffCtx) addAt(attr string, t change) {
	c.enter(attr)
	c.add(t)
	c.leave()
}

func (c *diffCtx) enter(p string) { c.path = append(c.path, p) }
func (c *diffCtx) leave()         { c.path = c.path[:len(c.path)-1] }

func (c *diffCtx) isCompatible() bool {
	for _, d := range c.diffs {
		if !c.compatible[d.typ] {
			return false
		}
	}
	return true
}

// rebased adds differences found relative to a pair under the current path.
func (c *diffCtx) rebased(rel []difference) {
	if len(c.path) == 0 {
		c.diffs = append(c.diffs, rel...)
		return
	}
	prefix := c.pathString()
	for _, d := range rel {
		p := prefix
		if len(d.path) > 2 {
			p = prefix + "/" + d.path[2:]
		}
		c.diffs = append(c.diffs, difference{d.typ, p})
	}
}

// memoized compares a pair once per comparison; a pair met again while it
// is being compared is a recursive cycle, compatible unless an earlier pass
// found the pair incompatible.
func (c *diffCtx) memoized(o, u *jnode, cmp func(*diffCtx)) []difference {
	k := pair{o, u}
	if d, ok := c.sh.memo[k]; ok {
		return d
	}
	if c.sh.inProgress[k] {
		if d, ok := c.sh.seed[k]; ok {
			return d
		}
		c.sh.optimism = true
		return nil
	}
	*c.sh.pairs++
	if *c.sh.pairs > maxPairs {
		return nil
	}
	c.sh.inProgress[k] = true
	sub := &diffCtx{compatible: c.compatible, sh: c.sh}
	cmp(sub)
	delete(c.sh.inProgress, k)
	c.sh.memo[k] = sub.diffs
	return sub.diffs
}

// maxPasses bounds the fixpoint iteration (it converges in a few passes;
// the bound only guards against a case the proof misses).
const maxPasses = 32

// compareSchemas is SchemaDiff.compare(original, update): every difference,
// compatible or not, iterated to a fixpoint over recursive cycles. ok is
// false when the comparison was stopped at maxPairs.
func compareSchemas(compatible map[change]bool, original, update *jnode) (diffs []difference, ok bool) {
	var seed map[pair][]difference
	pairs := 0
	for pass := 0; ; pass++ {
		ctx := &diffCtx{compatible: compatible, sh: &shared{
			memo: make(map[pair][]difference), inProgress: make(map[pair]bool), seed: seed, pairs: &pairs,
		}}
		compare(ctx, original, update)
		if pairs > maxPairs {
			return nil, false
		}
		incompatible := make(map[pair][]difference)
		for k, ds := range ctx.sh.memo {
			for _, d := range ds {
				if !compatible[d.typ] {
					incompatible[k] = ds
					break
				}
			}
		}
		same := len(incompatible) == len(seed)
		for k := range incompatible {
			if _, ok := seed[k]; !ok {
				same = false
			}
		}
		if !ctx.sh.optimism || same || pass >= maxPasses {
			return ctx.diffs, true
		}
		seed = incompatible
	}
}

func normalize(n *jnode) *jnode {
	if n.kind == kRef {
		if n.ref == nil {
			return &jnode{kind: kEmpty}
		}
		return n.ref
	}
	return n
}

func compare(ctx *diffCtx, original, update *jnode) {
	switch {
	case original == nil && update == nil:
		return
	case original == nil:
		ctx.add(schemaAdded)
		return
	case update == nil:
		ctx.add(schemaRemoved)
		return
	}
	o, u := normalize(original), normalize(update)
	ctx.rebased(ctx.memoized(o, u, func(sub *diffCtx) { compareTypes(sub, o, u) }))
}

func isEmpty(n *jnode) bool { return n.kind == kEmpty || n.kind == kTrue }

func sameClass(a, b *jnode) bool { return a.kind == b.kind }

func compareTypes(ctx *diffCtx, o, u *jnode) {
	if o.kind != kCombined && u.kind == kCombined {
		if len(u.subs) == 1 {
			sub := ctx.sub()
			compare(sub, o, u.subs[0])
			if sub.isCompatible() {
				ctx.diffs = append(ctx.diffs, sub.diffs...)
				return
			}
		} else if u.criterion == "anyOf" || u.criterion == "oneOf" {
			for _, s := range u.subs {
				sub := ctx.sub()
				compare(sub, o, s)
				if sub.isCompatible() {
					ctx.diffs = append(ctx.diffs, sub.diffs...)
					ctx.add(sumTypeExtended)
					return
				}
			}
		}
	} else if o.kind == kCombined && u.kind != kCombined {
		if len(o.subs) == 1 {
			sub := ctx.sub()
			compare(sub, o.subs[0], u)
			if sub.isCompatible() {
				ctx.diffs = append(ctx.diffs, sub.diffs...)
				return
			}
		} else if o.criterion == "allOf" {
			for _, s := range o.subs {
				sub := ctx.sub()
				compare(sub, s, u)
				if sub.isCompatible() {
					ctx.diffs = append(ctx.diffs, sub.diffs...)
					ctx.add(productTypeNarrowed)
					return
				}
			}
		}
	}
	if !sameClass(o, u) {
		// A true schema is an empty one.
		if o.kind == kFalse || isEmpty(u) {
			return
		}
		// Two schemas of connect.type bytes are one type (Confluent's fix
		// for Connect's decimals).
		if o.connectType == "bytes" && u.connectType == "bytes" {
			return
		}
		ctx.add(typeChanged)
		return
	}
	if !eqStr(o.id, u.id) {
		ctx.add(idChanged)
	}
	if !eqStr(o.title, u.title) {
		ctx.add(titleChanged)
	}
	if !eqStr(o.description, u.description) {
		ctx.add(descriptionChanged)
	}
	if o.hasDefault != u.hasDefault || o.hasDefault && !defaultEqual(o.def, u.def) {
		ctx.add(defaultChanged)
	}
	switch o.kind {
	case kString:
		compareString(ctx, o, u)
	case kNumber:
		compareNumber(ctx, o, u)
	case kConst:
		if !jsonEqual(o.value, u.value) {
			ctx.addAt("const", enumArrayChanged)
		}
	case kEnum:
		compareEnum(ctx, o, u)
	case kCombined:
		compareCombined(ctx, o, u)
	case kNot:
		ctx.enter("not")
		sub := ctx.sub()
		// The wrapped schemas compare the other way round.
		compare(sub, u.not, o.not)
		if sub.isCompatible() {
			ctx.add(notTypeNarrowed)
		} else {
			ctx.add(notTypeExtended)
		}
		ctx.leave()
	case kObject:
		compareObject(ctx, o, u)
	case kArray:
		compareArray(ctx, o, u)
	}
}

func eqStr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func eqInt(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// limit compares an optional bound: added, removed, increased, decreased.
func limit(ctx *diffCtx, attr string, o, u *int64, added, removed, increased, decreased change) {
	switch {
	case eqInt(o, u):
	case o == nil:
		ctx.addAt(attr, added)
	case u == nil:
		ctx.addAt(attr, removed)
	case *o < *u:
		ctx.addAt(attr, increased)
	case *o > *u:
		ctx.addAt(attr, decreased)
	}
}

func compareString(ctx *diffCtx, o, u *jnode) {
	limit(ctx, "maxLength", o.maxLength, u.maxLength, maxLengthAdded, maxLengthRemoved, maxLengthIncreased, maxLengthDecreased)
	limit(ctx, "minLength", o.minLength, u.minLength, minLengthAdded, minLengthRemoved, minLengthIncreased, minLengthDecreased)
	switch {
	case o.pattern == nil && u.pattern != nil:
		ctx.addAt("pattern", patternAdded)
	case o.pattern != nil && u.pattern == nil:
		ctx.addAt("pattern", patternRemoved)
	case o.pattern != nil && *o.pattern != *u.pattern:
		ctx.addAt("pattern", patternChanged)
	}
}

// numLimit compares optional numbers as Confluent does: presence, then
// their double values.
func numLimit(ctx *diffCtx, attr string, o, u *string, added, removed, increased, decreased change) {
	switch {
	case o == nil && u == nil:
	case o == nil:
		ctx.addAt(attr, added)
	case u == nil:
		ctx.addAt(attr, removed)
	default:
		a, b := jsontree.Float64(*o), jsontree.Float64(*u)
		if a < b {
			ctx.addAt(attr, increased)
		} else if a > b {
			ctx.addAt(attr, decreased)
		}
	}
}

func compareNumber(ctx *diffCtx, o, u *jnode) {
	numLimit(ctx, "maximum", o.maximum, u.maximum, maximumAdded, maximumRemoved, maximumIncreased, maximumDecreased)
	numLimit(ctx, "minimum", o.minimum, u.minimum, minimumAdded, minimumRemoved, minimumIncreased, minimumDecreased)
	numLimit(ctx, "exclusiveMaximum", o.exclMax, u.exclMax, exclusiveMaximumAdded, exclusiveMaximumRemoved, exclusiveMaximumIncreased, exclusiveMaximumDecreased)
	numLimit(ctx, "exclusiveMinimum", o.exclMin, u.exclMin, exclusiveMinimumAdded, exclusiveMinimumRemoved, exclusiveMinimumIncreased, exclusiveMinimumDecreased)
	om, um := rat(o.multipleOf), rat(u.multipleOf)
	switch {
	case om == nil && um == nil:
	case om == nil:
		ctx.addAt("multipleOf", multipleOfAdded)
	case um == nil:
		ctx.addAt("multipleOf", multipleOfRemoved)
	case om.Cmp(um) == 0:
	case om.Sign() != 0 && new(big.Rat).Quo(um, om).IsInt():
		ctx.addAt("multipleOf", multipleOfExpanded)
	case um.Sign() != 0 && new(big.Rat).Quo(om, um).IsInt():
		ctx.addAt("multipleOf", multipleOfReduced)
	default:
		ctx.addAt("multipleOf", multipleOfChanged)
	}
	if o.requiresInteger != u.requiresInteger {
		if o.requiresInteger {
			ctx.add(typeExtended)
		} else {
			ctx.add(typeNarrowed)
		}
	}
}

func rat(lit *string) *big.Rat {
	if lit == nil {
		return nil
	}
	r, ok := new(big.Rat).SetString(*lit)
	if !ok {
		return nil
	}
	return r
}

func compareEnum(ctx *diffCtx, o, u *jnode) {
	ov, uv := valueSet(o.values), valueSet(u.values)
	if setEqual(ov, uv) {
		return
	}
	switch {
	case contains(uv, ov):
		ctx.addAt("enum", enumArrayExtended)
	case contains(ov, uv):
		ctx.addAt("enum", enumArrayNarrowed)
	default:
		ctx.addAt("enum", enumArrayChanged)
	}
}

func valueSet(vs []*jsontree.Value) map[string]bool {
	s := make(map[string]bool, len(vs))
	for _, v := range vs {
		s[valueKey(v)] = true
	}
	return s
}

func setEqual(a, b map[string]bool) bool { return len(a) == len(b) && contains(a, b) }

func contains(super, sub map[string]bool) bool {
	for k := range sub {
		if !super[k] {
			return false
		}
	}
	return true
}

// valueKey is a value's identity as Java's equals on the objects org.json
// reads sees it: integers by value, decimals with their scale (1.0 and
// 1.00 differ, as BigDecimal's do), objects without key order.
func valueKey(v *jsontree.Value) string {
	switch v.Kind {
	case jsontree.Null:
		return "n"
	case jsontree.Bool:
		if v.Bool {
			return "t"
		}
		return "f"
	case jsontree.String:
		return "s" + jsontree.Compact(v, jsontree.Decimals)
	case jsontree.Number:
		return "d" + jsontree.Compact(v, jsontree.Decimals)
	case jsontree.Array:
		var sb strings.Builder
		sb.WriteByte('[')
		for _, it := range v.Items {
			sb.WriteString(valueKey(it))
			sb.WriteByte(',')
		}
		return sb.String()
	}
	sorted := jsontree.Sorted(v)
	var sb strings.Builder
	sb.WriteByte('{')
	for _, m := range sorted.Members {
		sb.WriteString(jsontree.Compact(jsontree.NewString(m.Key), jsontree.Decimals))
		sb.WriteByte(':')
		sb.WriteString(valueKey(m.Value))
		sb.WriteByte(',')
	}
	return sb.String()
}

func jsonEqual(a, b *jsontree.Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return valueKey(a) == valueKey(b)
}

// defaultEqual is Objects.equals on the org.json values everit keeps:
// JSONObject and JSONArray do not define equals, so two object or array
// defaults always differ.
func defaultEqual(a, b *jsontree.Value) bool {
	if a.Kind == jsontree.Object || a.Kind == jsontree.Array {
		return false
	}
	return jsonEqual(a, b)
}
