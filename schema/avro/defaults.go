package avro

import (
	"math"

	"sharq/schema/internal/jsontree"
)

// validDefault is Avro's Schema.isValidDefault: the JSON default of a
// field matches its type (a union's default may match any branch). A
// forward reference not yet resolved is checked as Java checks its
// placeholder, a record without fields.
func validDefault(n *node, v *jsontree.Value) bool {
	if v == nil {
		return false
	}
	switch n.typ {
	case String, Bytes, Enum, Fixed:
		return v.Kind == jsontree.String
	case Int:
		_, ok := intNode(v)
		return ok
	case Long:
		if v.Kind != jsontree.Number {
			return false
		}
		_, ok := jsontree.Int64(v.Str)
		return ok
	case Float, Double:
		return v.Kind == jsontree.Number
	case Boolean:
		return v.Kind == jsontree.Bool
	case Null:
		return v.Kind == jsontree.Null
	case Array:
		if v.Kind != jsontree.Array {
			return false
		}
		for _, it := range v.Items {
			if !validDefault(n.items, it) {
				return false
			}
		}
		return true
	case Map:
		if v.Kind != jsontree.Object {
			return false
		}
		for _, m := range v.Members {
			if !validDefault(n.items, m.Value) {
				return false
			}
		}
		return true
	case Union:
		for _, b := range n.branches {
			if validDefault(b, v) {
				return true
			}
		}
		return false
	case Record:
		if v.Kind != jsontree.Object {
			return false
		}
		for _, f := range n.fields {
			fv := v.Get(f.name)
			if fv == nil {
				fv = f.def
			}
			if !validValue(f.typ, fv) {
				return false
			}
		}
		return true
	}
	return false
}

// validValue is Java's isValidValue: for a union, one branch must take it.
func validValue(n *node, v *jsontree.Value) bool {
	if v == nil {
		return false
	}
	if n.typ == Union {
		for _, b := range n.branches {
			if validDefault(b, v) {
				return true
			}
		}
		return false
	}
	return validDefault(n, v)
}

func intNode(v *jsontree.Value) (int32, bool) {
	if v.Kind != jsontree.Number {
		return 0, false
	}
	return jsontree.Int32(v.Str)
}

// logicalType is LogicalTypes.fromSchemaIgnoreInvalid: the logicalType
// property when it names a type valid on n, with decimal's precision and
// scale. Only normalization's key order depends on it.
func logicalType(n *node) (string, int, int) {
	v, ok := n.prop("logicalType").Text()
	if !ok {
		return "", 0, 0
	}
	valid := false
	switch v {
	case "decimal":
		return decimal(n)
	case "big-decimal":
		valid = n.typ == Bytes
	case "duration":
		valid = n.typ == Fixed && n.size == 12
	case "uuid":
		valid = n.typ == String || n.typ == Fixed && n.size == 16
	case "date", "time-millis":
		valid = n.typ == Int
	case "time-micros", "timestamp-millis", "timestamp-micros", "timestamp-nanos",
		"local-timestamp-millis", "local-timestamp-micros", "local-timestamp-nanos":
		valid = n.typ == Long
	case "variant":
		// Confluent registers Avro's variant type on records.
		valid = n.typ == Record
	}
	if !valid {
		return "", 0, 0
	}
	return v, 0, 0
}

func decimal(n *node) (string, int, int) {
	if n.typ != Bytes && n.typ != Fixed {
		return "", 0, 0
	}
	pv := n.prop("precision")
	if pv == nil {
		return "", 0, 0
	}
	precision, ok := intNode(pv)
	if !ok || precision <= 0 {
		return "", 0, 0
	}
	scale := int32(0)
	if sv := n.prop("scale"); sv != nil {
		if scale, ok = intNode(sv); !ok || scale < 0 || scale > precision {
			return "", 0, 0
		}
	}
	if n.typ == Fixed && int(precision) > maxPrecision(n.size) {
		return "", 0, 0
	}
	return "decimal", int(precision), int(scale)
}

// maxPrecision is the digits a fixed of size bytes holds, computed as
// Avro's Decimal.maxPrecision does (in floating point).
func maxPrecision(size int) int {
	return int(math.Floor(math.Log10(2) * float64(8*size-1)))
}
