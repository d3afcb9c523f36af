package jsonschema

import (
	"sharq/schema/internal/javaorder"
)

// compareObject is Confluent's ObjectSchemaDiff: required, properties
// against the open or closed content model, dependencies, additional and
// unevaluated properties, then the size bounds.
func compareObject(ctx *diffCtx, o, u *jnode) {
	compareRequired(ctx, o, u)
	compareProperties(ctx, o, u)
	compareDependencies(ctx, o, u)
	compareAdditionalProperties(ctx, o, u)
	compareUnevaluated(ctx, "unevaluatedProperties", o.unevalProps, u.unevalProps,
		unevaluatedPropertiesAdded, unevaluatedPropertiesRemoved, unevaluatedPropertiesExtended, unevaluatedPropertiesNarrowed)
	limit(ctx, "maxProperties", o.maxProps, u.maxProps, maxPropertiesAdded, maxPropertiesRemoved, maxPropertiesIncreased, maxPropertiesDecreased)
	limit(ctx, "minProperties", o.minProps, u.minProps, minPropertiesAdded, minPropertiesRemoved, minPropertiesIncreased, minPropertiesDecreased)
}

func compareRequired(ctx *diffCtx, o, u *jnode) {
	ctx.enter("required")
	defer ctx.leave()
	for _, name := range o.propNames() {
		us := u.prop(name)
		if us == nil {
			continue
		}
		ctx.enter(name)
		or, ur := o.requires(name), u.requires(name)
		switch {
		case or && !ur:
			ctx.add(requiredAttributeRemoved)
		case !or && ur && us.hasDefault:
			ctx.add(requiredAttributeWithDefaultAdded)
		case !or && ur:
			ctx.add(requiredAttributeAdded)
		}
		ctx.leave()
	}
}

// openContent: additionalProperties true or absent, no patternProperties,
// unevaluatedProperties true or absent.
func openContent(n *jnode) bool {
	return n.addProps && n.addPropsSch == nil && len(n.patternProps) == 0 &&
		(n.unevalProps == nil || isEmpty(n.unevalProps))
}

// partialContent is the schema a partially open content model gives an
// undeclared property: a matching pattern property's, the
// additionalProperties schema, or the unevaluatedProperties schema.
func partialContent(n *jnode, name string) *jnode {
	for _, pp := range n.patternProps {
		if pp.re != nil && pp.re.MatchString(name) {
			return pp.schema
		}
	}
	if n.addPropsSch != nil {
		return n.addPropsSch
	}
	if n.addProps && n.addPropsSch == nil && n.unevalProps != nil && n.unevalProps.kind != kFalse && !isEmpty(n.unevalProps) {
		return n.unevalProps
	}
	return nil
}

func compareProperties(ctx *diffCtx, o, u *jnode) {
	ctx.enter("properties")
	defer ctx.leave()
	for _, name := range javaorder.Strings(o.propNames(), u.propNames()) {
		ctx.enter(name)
		os, us := o.prop(name), u.prop(name)
		switch {
		case us == nil:
			// A property may go only where the update is open for it.
			if openContent(u) {
				ctx.add(propertyRemovedFromOpen)
			} else if partial := partialContent(u, name); partial != nil {
				sub := ctx.sub()
				compare(sub, os, partial)
				ctx.diffs = append(ctx.diffs, sub.diffs...)
				if sub.isCompatible() {
					ctx.add(propertyRemovedCoveredByPartial)
				} else {
					ctx.add(propertyRemovedNotCoveredByPartial)
				}
			} else if os.kind == kFalse {
				ctx.add(propertyWithFalseRemovedFromClosed)
			} else {
				ctx.add(propertyRemovedFromClosed)
			}
		case os == nil:
			// A property may come only where the original was closed to it.
			if openContent(o) {
				switch {
				case isEmpty(us):
					ctx.add(propertyWithEmptySchemaAddedToOpen)
				case u.requires(name) && us.hasDefault:
					ctx.add(requiredPropertyWithDefaultAddedToOpen)
				case u.requires(name):
					ctx.add(requiredPropertyAddedToOpen)
				default:
					ctx.add(optionalPropertyAddedToOpen)
				}
			} else {
				if partial := partialContent(o, name); partial != nil {
					sub := ctx.sub()
					compare(sub, partial, us)
					ctx.diffs = append(ctx.diffs, sub.diffs...)
					if sub.isCompatible() {
						ctx.add(propertyAddedCoveredByPartial)
					} else {
						ctx.add(propertyAddedNotCoveredByPartial)
					}
				}
				switch {
				case u.requires(name) && us.hasDefault:
					ctx.add(requiredPropertyWithDefaultAddedToUnopen)
				case u.requires(name):
					ctx.add(requiredPropertyAddedToUnopen)
				default:
					ctx.add(optionalPropertyAddedToUnopen)
				}
			}
		default:
			compare(ctx, os, us)
		}
		ctx.leave()
	}
}

func compareDependencies(ctx *diffCtx, o, u *jnode) {
	ctx.enter("dependencies")
	defer ctx.leave()
	depOf := func(n *jnode, name string) ([]string, bool) {
		for _, d := range n.propDeps {
			if d.name == name {
				return d.needs, true
			}
		}
		return nil, false
	}
	depName := func(d propDep) string { return d.name }
	for _, name := range javaorder.Strings(depNames(o.propDeps, depName), depNames(u.propDeps, depName)) {
		ctx.enter(name)
		od, oOK := depOf(o, name)
		ud, uOK := depOf(u, name)
		switch {
		case !uOK:
			ctx.add(dependencyArrayRemoved)
		case !oOK:
			ctx.add(dependencyArrayAdded)
		default:
			os, us := stringSet(od), stringSet(ud)
			switch {
			case setEqual(os, us):
			case contains(us, os):
				ctx.add(dependencyArrayExtended)
			case contains(os, us):
				ctx.add(dependencyArrayNarrowed)
			default:
				ctx.add(dependencyArrayChanged)
			}
		}
		ctx.leave()
	}
	schemaOf := func(n *jnode, name string) *jnode {
		for _, d := range n.schemaDeps {
			if d.name == name {
				return d.schema
			}
		}
		return nil
	}
	propName := func(p prop) string { return p.name }
	for _, name := range javaorder.Strings(depNames(o.schemaDeps, propName), depNames(u.schemaDeps, propName)) {
		ctx.enter(name)
		os, us := schemaOf(o, name), schemaOf(u, name)
		switch {
		case us == nil:
			ctx.add(dependencySchemaRemoved)
		case os == nil:
			ctx.add(dependencySchemaAdded)
		default:
			compare(ctx, os, us)
		}
		ctx.leave()
	}
}

func stringSet(list []string) map[string]bool {
	s := make(map[string]bool, len(list))
	for _, x := range list {
		s[x] = true
	}
	return s
}

func compareAdditionalProperties(ctx *diffCtx, o, u *jnode) {
	ctx.enter("additionalProperties")
	defer ctx.leave()
	switch {
	case o.addProps != u.addProps:
		if u.addProps {
			ctx.add(additionalPropertiesAdded)
		} else {
			ctx.add(additionalPropertiesRemoved)
		}
	case o.addPropsSch == nil && u.addPropsSch != nil:
		ctx.add(additionalPropertiesNarrowed)
	case u.addPropsSch == nil && o.addPropsSch != nil:
		ctx.add(additionalPropertiesExtended)
	default:
		compare(ctx, o.addPropsSch, u.addPropsSch)
	}
}

// compareUnevaluated compares unevaluatedProperties or unevaluatedItems
// (2019-09 and later).
func compareUnevaluated(ctx *diffCtx, attr string, o, u *jnode, added, removed, extended, narrowed change) {
	if o == nil && u == nil {
		return
	}
	ctx.enter(attr)
	defer ctx.leave()
	switch {
	case o == nil:
		if u.kind == kFalse {
			ctx.add(removed)
		} else {
			ctx.add(narrowed)
		}
	case u == nil:
		if o.kind == kFalse {
			ctx.add(added)
		} else {
			ctx.add(extended)
		}
	case o.kind == kFalse && u.kind != kFalse:
		ctx.add(added)
	case o.kind != kFalse && u.kind == kFalse:
		ctx.add(removed)
	case isEmpty(o) && !isEmpty(u):
		ctx.add(narrowed)
	case !isEmpty(o) && isEmpty(u):
		ctx.add(extended)
	default:
		compare(ctx, o, u)
	}
}
