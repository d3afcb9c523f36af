package jsonschema

import "strings"

// change is one of Confluent's JSON Schema Difference.Type values.
type change string

// The kinds of change Confluent's JSON Schema diff reports.
const (
	idChanged          change = "ID_CHANGED"
	descriptionChanged change = "DESCRIPTION_CHANGED"
	titleChanged       change = "TITLE_CHANGED"
	defaultChanged     change = "DEFAULT_CHANGED"
	schemaAdded        change = "SCHEMA_ADDED"
	schemaRemoved      change = "SCHEMA_REMOVED"
	typeExtended       change = "TYPE_EXTENDED"
	typeNarrowed       change = "TYPE_NARROWED"
	typeChanged        change = "TYPE_CHANGED"

	maxLengthAdded     change = "MAX_LENGTH_ADDED"
	maxLengthRemoved   change = "MAX_LENGTH_REMOVED"
	maxLengthIncreased change = "MAX_LENGTH_INCREASED"
	maxLengthDecreased change = "MAX_LENGTH_DECREASED"
	minLengthAdded     change = "MIN_LENGTH_ADDED"
	minLengthRemoved   change = "MIN_LENGTH_REMOVED"
	minLengthIncreased change = "MIN_LENGTH_INCREASED"
	minLengthDecreased change = "MIN_LENGTH_DECREASED"
	patternAdded       change = "PATTERN_ADDED"
	patternRemoved     change = "PATTERN_REMOVED"
	patternChanged     change = "PATTERN_CHANGED"

	maximumAdded              change = "MAXIMUM_ADDED"
	maximumRemoved            change = "MAXIMUM_REMOVED"
	maximumIncreased          change = "MAXIMUM_INCREASED"
	maximumDecreased          change = "MAXIMUM_DECREASED"
	minimumAdded              change = "MINIMUM_ADDED"
	minimumRemoved            change = "MINIMUM_REMOVED"
	minimumIncreased          change = "MINIMUM_INCREASED"
	minimumDecreased          change = "MINIMUM_DECREASED"
	exclusiveMaximumAdded     change = "EXCLUSIVE_MAXIMUM_ADDED"
	exclusiveMaximumRemoved   change = "EXCLUSIVE_MAXIMUM_REMOVED"
	exclusiveMaximumIncreased change = "EXCLUSIVE_MAXIMUM_INCREASED"
	exclusiveMaximumDecreased change = "EXCLUSIVE_MAXIMUM_DECREASED"
	exclusiveMinimumAdded     change = "EXCLUSIVE_MINIMUM_ADDED"
	exclusiveMinimumRemoved   change = "EXCLUSIVE_MINIMUM_REMOVED"
	exclusiveMinimumIncreased change = "EXCLUSIVE_MINIMUM_INCREASED"
	exclusiveMinimumDecreased change = "EXCLUSIVE_MINIMUM_DECREASED"
	multipleOfAdded           change = "MULTIPLE_OF_ADDED"
	multipleOfRemoved         change = "MULTIPLE_OF_REMOVED"
	multipleOfExpanded        change = "MULTIPLE_OF_EXPANDED"
	multipleOfReduced         change = "MULTIPLE_OF_REDUCED"
	multipleOfChanged         change = "MULTIPLE_OF_CHANGED"

	requiredAttributeAdded            change = "REQUIRED_ATTRIBUTE_ADDED"
	requiredAttributeWithDefaultAdded change = "REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED"
	requiredAttributeRemoved          change = "REQUIRED_ATTRIBUTE_REMOVED"
	maxPropertiesAdded                change = "MAX_PROPERTIES_ADDED"
	maxPropertiesRemoved              change = "MAX_PROPERTIES_REMOVED"
	maxPropertiesIncreased            change = "MAX_PROPERTIES_INCREASED"
	maxPropertiesDecreased            change = "MAX_PROPERTIES_DECREASED"
	minPropertiesAdded                change = "MIN_PROPERTIES_ADDED"
	minPropertiesRemoved              change = "MIN_PROPERTIES_REMOVED"
	minPropertiesIncreased            change = "MIN_PROPERTIES_INCREASED"
	minPropertiesDecreased            change = "MIN_PROPERTIES_DECREASED"
	additionalPropertiesAdded         change = "ADDITIONAL_PROPERTIES_ADDED"
	additionalPropertiesRemoved       change = "ADDITIONAL_PROPERTIES_REMOVED"
	additionalPropertiesExtended      change = "ADDITIONAL_PROPERTIES_EXTENDED"
	additionalPropertiesNarrowed      change = "ADDITIONAL_PROPERTIES_NARROWED"
	dependencyArrayAdded              change = "DEPENDENCY_ARRAY_ADDED"
	dependencyArrayRemoved            change = "DEPENDENCY_ARRAY_REMOVED"
	dependencyArrayExtended           change = "DEPENDENCY_ARRAY_EXTENDED"
	dependencyArrayNarrowed           change = "DEPENDENCY_ARRAY_NARROWED"
	dependencyArrayChanged            change = "DEPENDENCY_ARRAY_CHANGED"
	dependencySchemaAdded             change = "DEPENDENCY_SCHEMA_ADDED"
	dependencySchemaRemoved           change = "DEPENDENCY_SCHEMA_REMOVED"

	requiredPropertyAddedToOpen              change = "REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
	requiredPropertyWithDefaultAddedToOpen   change = "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL"
	optionalPropertyAddedToOpen              change = "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL"
	propertyWithEmptySchemaAddedToOpen       change = "PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
	requiredPropertyAddedToUnopen            change = "REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
	requiredPropertyWithDefaultAddedToUnopen change = "REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL"
	optionalPropertyAddedToUnopen            change = "OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL"
	propertyRemovedFromOpen                  change = "PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL"
	propertyWithFalseRemovedFromClosed       change = "PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL"
	propertyRemovedFromClosed                change = "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL"
	propertyRemovedCoveredByPartial          change = "PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
	propertyRemovedNotCoveredByPartial       change = "PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
	propertyAddedCoveredByPartial            change = "PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
	propertyAddedNotCoveredByPartial         change = "PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
	unevaluatedPropertiesAdded               change = "UNEVALUATED_PROPERTIES_ADDED"
	unevaluatedPropertiesRemoved             change = "UNEVALUATED_PROPERTIES_REMOVED"
	unevaluatedPropertiesExtended            change = "UNEVALUATED_PROPERTIES_EXTENDED"
	unevaluatedPropertiesNarrowed            change = "UNEVALUATED_PROPERTIES_NARROWED"

	maxItemsAdded                  change = "MAX_ITEMS_ADDED"
	maxItemsRemoved                change = "MAX_ITEMS_REMOVED"
	maxItemsIncreased              change = "MAX_ITEMS_INCREASED"
	maxItemsDecreased              change = "MAX_ITEMS_DECREASED"
	minItemsAdded                  change = "MIN_ITEMS_ADDED"
	minItemsRemoved                change = "MIN_ITEMS_REMOVED"
	minItemsIncreased              change = "MIN_ITEMS_INCREASED"
	minItemsDecreased              change = "MIN_ITEMS_DECREASED"
	maxContainsAdded               change = "MAX_CONTAINS_ADDED"
	maxContainsRemoved             change = "MAX_CONTAINS_REMOVED"
	maxContainsIncreased           change = "MAX_CONTAINS_INCREASED"
	maxContainsDecreased           change = "MAX_CONTAINS_DECREASED"
	minContainsAdded               change = "MIN_CONTAINS_ADDED"
	minContainsRemoved             change = "MIN_CONTAINS_REMOVED"
	minContainsIncreased           change = "MIN_CONTAINS_INCREASED"
	minContainsDecreased           change = "MIN_CONTAINS_DECREASED"
	uniqueItemsAdded               change = "UNIQUE_ITEMS_ADDED"
	uniqueItemsRemoved             change = "UNIQUE_ITEMS_REMOVED"
	additionalItemsAdded           change = "ADDITIONAL_ITEMS_ADDED"
	additionalItemsRemoved         change = "ADDITIONAL_ITEMS_REMOVED"
	additionalItemsExtended        change = "ADDITIONAL_ITEMS_EXTENDED"
	additionalItemsNarrowed        change = "ADDITIONAL_ITEMS_NARROWED"
	unevaluatedItemsAdded          change = "UNEVALUATED_ITEMS_ADDED"
	unevaluatedItemsRemoved        change = "UNEVALUATED_ITEMS_REMOVED"
	unevaluatedItemsExtended       change = "UNEVALUATED_ITEMS_EXTENDED"
	unevaluatedItemsNarrowed       change = "UNEVALUATED_ITEMS_NARROWED"
	itemAddedToOpen                change = "ITEM_ADDED_TO_OPEN_CONTENT_MODEL"
	itemWithEmptySchemaAddedToOpen change = "ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL"
	itemAddedToClosed              change = "ITEM_ADDED_TO_CLOSED_CONTENT_MODEL"
	itemRemovedFromOpen            change = "ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL"
	itemWithFalseRemovedFromClosed change = "ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL"
	itemRemovedFromClosed          change = "ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL"
	itemRemovedCoveredByPartial    change = "ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
	itemRemovedNotCoveredByPartial change = "ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
	itemAddedCoveredByPartial      change = "ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"
	itemAddedNotCoveredByPartial   change = "ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL"

	enumArrayExtended change = "ENUM_ARRAY_EXTENDED"
	enumArrayNarrowed change = "ENUM_ARRAY_NARROWED"
	enumArrayChanged  change = "ENUM_ARRAY_CHANGED"

	combinedTypeExtended          change = "COMBINED_TYPE_EXTENDED"
	combinedTypeChanged           change = "COMBINED_TYPE_CHANGED"
	productTypeExtended           change = "PRODUCT_TYPE_EXTENDED"
	productTypeNarrowed           change = "PRODUCT_TYPE_NARROWED"
	sumTypeExtended               change = "SUM_TYPE_EXTENDED"
	sumTypeNarrowed               change = "SUM_TYPE_NARROWED"
	combinedTypeSubschemasChanged change = "COMBINED_TYPE_SUBSCHEMAS_CHANGED"
	notTypeExtended               change = "NOT_TYPE_EXTENDED"
	notTypeNarrowed               change = "NOT_TYPE_NARROWED"
)

// compatibleStrict is Confluent's SchemaDiff.COMPATIBLE_CHANGES_STRICT, the
// set its isBackwardCompatible uses under the default (STRICT) policy.
var compatibleStrict = set(
	idChanged, descriptionChanged, titleChanged, defaultChanged, schemaRemoved, typeExtended,
	maxLengthIncreased, maxLengthRemoved, minLengthDecreased, minLengthRemoved, patternRemoved,
	maximumIncreased, maximumRemoved, minimumDecreased, minimumRemoved,
	exclusiveMaximumIncreased, exclusiveMaximumRemoved, exclusiveMinimumDecreased, exclusiveMinimumRemoved,
	multipleOfReduced, multipleOfRemoved,
	requiredAttributeWithDefaultAdded, requiredAttributeRemoved, dependencyArrayNarrowed,
	dependencyArrayRemoved, dependencySchemaRemoved, maxPropertiesIncreased, maxPropertiesRemoved,
	minPropertiesDecreased, minPropertiesRemoved, additionalPropertiesAdded, additionalPropertiesExtended,
	unevaluatedPropertiesAdded, unevaluatedPropertiesExtended,
	propertyWithEmptySchemaAddedToOpen, requiredPropertyWithDefaultAddedToUnopen,
	optionalPropertyAddedToUnopen, propertyWithFalseRemovedFromClosed, propertyRemovedFromOpen,
	propertyAddedCoveredByPartial, propertyRemovedCoveredByPartial,
	maxItemsIncreased, maxItemsRemoved, minItemsDecreased, minItemsRemoved,
	maxContainsIncreased, maxContainsRemoved, minContainsDecreased, minContainsRemoved,
	uniqueItemsRemoved, additionalItemsAdded, additionalItemsExtended,
	unevaluatedItemsAdded, unevaluatedItemsExtended,
	itemWithEmptySchemaAddedToOpen, itemAddedToClosed, itemWithFalseRemovedFromClosed,
	itemRemovedFromOpen, itemAddedCoveredByPartial, itemRemovedCoveredByPartial,
	enumArrayExtended, combinedTypeExtended, productTypeNarrowed, sumTypeExtended, notTypeNarrowed,
)

// compatibleLenient is COMPATIBLE_CHANGES_LENIENT: STRICT plus the changes
// that only a lenient policy accepts (open content models treated as
// closed).
var compatibleLenient = union(compatibleStrict, set(
	additionalPropertiesNarrowed, additionalPropertiesRemoved, unevaluatedPropertiesNarrowed,
	unevaluatedPropertiesRemoved, requiredPropertyWithDefaultAddedToOpen, optionalPropertyAddedToOpen,
	propertyRemovedFromOpen, propertyRemovedFromClosed, propertyAddedNotCoveredByPartial,
	propertyRemovedNotCoveredByPartial,
))

func set(cs ...change) map[change]bool {
	m := make(map[change]bool, len(cs))
	for _, c := range cs {
		m[c] = true
	}
	return m
}

func union(a, b map[change]bool) map[change]bool {
	m := make(map[change]bool, len(a)+len(b))
	for c := range a {
		m[c] = true
	}
	for c := range b {
		m[c] = true
	}
	return m
}

// difference is one change at a JSON pointer ("#/properties/a").
type difference struct {
	typ  change
	path string
}

var (
	keywordAddedOrRemoved = set(maximumAdded, minimumAdded, exclusiveMaximumAdded, exclusiveMinimumAdded,
		multipleOfAdded, maxLengthAdded, minLengthAdded, patternAdded, requiredAttributeAdded,
		maxPropertiesAdded, minPropertiesAdded, dependencyArrayAdded, dependencySchemaAdded,
		maxItemsAdded, minItemsAdded, maxContainsAdded, minContainsAdded, uniqueItemsAdded,
		additionalItemsRemoved, additionalPropertiesRemoved, unevaluatedPropertiesRemoved,
		unevaluatedItemsRemoved)
	valueIncreased = set(minLengthIncreased, minimumIncreased, exclusiveMinimumIncreased,
		minPropertiesIncreased, multipleOfExpanded, minItemsIncreased, minContainsIncreased)
	valueDecreased = set(maxLengthDecreased, maximumDecreased, maxItemsDecreased, maxContainsDecreased,
		exclusiveMaximumDecreased, maxPropertiesDecreased)
	typeNarrowedSet = set(additionalItemsNarrowed, enumArrayNarrowed, sumTypeNarrowed,
		additionalPropertiesNarrowed, unevaluatedPropertiesNarrowed, unevaluatedItemsNarrowed)
	valueChangedSet = set(patternChanged, multipleOfChanged, dependencyArrayChanged)
	typeChangedSet  = set(typeChanged, typeNarrowed, combinedTypeChanged, combinedTypeSubschemasChanged,
		enumArrayChanged)
	typeExtendedSet = set(dependencyArrayExtended, productTypeExtended, sumTypeExtended, notTypeExtended)
	addedToOpenSet  = set(requiredPropertyAddedToOpen, requiredPropertyWithDefaultAddedToOpen,
		optionalPropertyAddedToOpen, itemAddedToOpen)
)

// message is Confluent's json.diff.Difference.toString(): the roles left as
// %s for the registry, the odd closing quote as Confluent writes it.
func (d difference) message() string {
	p := strings.ReplaceAll(d.path, "%", "%%")
	var m string
	switch {
	case keywordAddedOrRemoved[d.typ]:
		m = "The keyword at path '" + p + "' in the %s schema is not present in the %s schema"
	case valueIncreased[d.typ]:
		m = "The value at path '" + p + "' in the %s schema is more than its value in the %s schema"
	case valueDecreased[d.typ]:
		m = "The value at path '" + p + "' in the %s schema is less than its value in the %s schema"
	case valueChangedSet[d.typ]:
		m = "The value at path '" + p + "' is different between the %s and %s schema"
	case typeNarrowedSet[d.typ]:
		m = "An array or combined type at path '" + p + "' has fewer elements in the %s schema than the %s schema"
	case typeExtendedSet[d.typ]:
		m = "An array or combined type at path '" + p + "' has more elements in the %s schema than the %s schema"
	case typeChangedSet[d.typ]:
		m = "A type at path '" + p + "' is different between the %s schema and the %s schema"
	case addedToOpenSet[d.typ]:
		m = "The %s schema has an open content model and has a property or item at path '" + p + "' which is missing in the %s schema"
	case d.typ == requiredPropertyAddedToUnopen:
		m = "The %s schema has an unopen content model and has a required property at path '" + p + "' which is missing in the %s schema"
	case d.typ == propertyRemovedFromClosed || d.typ == itemRemovedFromClosed:
		m = "The %s has a closed content model and is missing a property or item present at path '" + p + "' in the %s schema"
	case d.typ == propertyRemovedNotCoveredByPartial || d.typ == itemRemovedNotCoveredByPartial:
		m = "A property or item is missing in the %s schema but present at path '" + p + "' in the %s schema and is not covered by its partially open content model"
	case d.typ == propertyAddedNotCoveredByPartial || d.typ == itemAddedNotCoveredByPartial:
		m = "The %s schema has a property or item at path '" + p + "' which is missing in the %s schema and is not covered by its partially open content model"
	}
	return `{errorType:"` + string(d.typ) + `", description:"` + m + `'}`
}
