package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Type is a Kafka config type, numbered as DescribeConfigs' ConfigType.
type Type int8

// Kafka's DescribeConfigsResponse ConfigType ids.
const (
	TypeBoolean  Type = 1
	TypeString   Type = 2
	TypeInt      Type = 3
	TypeShort    Type = 4
	TypeLong     Type = 5
	TypeDouble   Type = 6
	TypeList     Type = 7
	TypeClass    Type = 8
	TypePassword Type = 9
)

func (t Type) String() string {
	switch t {
	case TypeBoolean:
		return "boolean"
	case TypeString:
		return "string"
	case TypeInt:
		return "int"
	case TypeShort:
		return "short"
	case TypeLong:
		return "long"
	case TypeDouble:
		return "double"
	case TypeList:
		return "list"
	case TypeClass:
		return "class"
	case TypePassword:
		return "password"
	}
	return "unknown"
}

// parseTyped converts a Kafka string value to its Go form: bool, int64 (INT,
// SHORT, LONG, range-checked for the type), float64, []string or string. The
// reasons are Kafka's ConfigDef.parseType wording.
func parseTyped(t Type, raw string) (any, string) {
	s := strings.TrimSpace(raw)
	switch t {
	case TypeBoolean:
		switch strings.ToLower(s) {
		case "true":
			return true, ""
		case "false":
			return false, ""
		}
		return nil, "Expected value to be either true or false"
	case TypeInt:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, "Not a number of type INT"
		}
		return n, ""
	case TypeShort:
		n, err := strconv.ParseInt(s, 10, 16)
		if err != nil {
			return nil, "Not a number of type SHORT"
		}
		return n, ""
	case TypeLong:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, "Not a number of type LONG"
		}
		return n, ""
	case TypeDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, "Not a number of type DOUBLE"
		}
		return f, ""
	case TypeList:
		if s == "" {
			return []string{}, ""
		}
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts, ""
	default:
		return s, ""
	}
}

// formatTyped is Kafka's ConfigDef.convertToString.
func formatTyped(v any) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return javaDouble(x)
	case []string:
		return strings.Join(x, ",")
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// javaDouble prints a float the way Java's Double.toString does, so
// DescribeConfigs matches Kafka: plain decimals (0.5, 1.0) from 10^-3 up to
// 10^7, otherwise "computerized scientific notation" (1.0E7,
// 1.7976931348623157E308, the default of log.cleaner.io.max.bytes.per.second).
func javaDouble(f float64) string {
	if a := math.Abs(f); a != 0 && !math.IsInf(f, 0) && !math.IsNaN(f) && (a < 1e-3 || a >= 1e7) {
		mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		e, _ := strconv.Atoi(exp)
		return mant + "E" + strconv.Itoa(e)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}

// validator checks a parsed value and describes itself for the docs.
type validator interface {
	check(v any) string // "" if valid, else Kafka's reason
	String() string     // "Valid Values" column
}

type rangeV struct {
	min, max       float64
	hasMin, hasMax bool
}

func atLeast(n float64) validator    { return rangeV{min: n, hasMin: true} }
func between(a, b float64) validator { return rangeV{min: a, max: b, hasMin: true, hasMax: true} }
func fmtNum(f float64) string        { return strconv.FormatFloat(f, 'f', -1, 64) }
func (r rangeV) String() string {
	switch {
	case r.hasMin && r.hasMax:
		return "[" + fmtNum(r.min) + ",...," + fmtNum(r.max) + "]"
	case r.hasMin:
		return "[" + fmtNum(r.min) + ",...]"
	}
	return ""
}
func (r rangeV) check(v any) string {
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case float64:
		f = x
	default:
		return ""
	}
	if r.hasMin && f < r.min {
		return "Value must be at least " + fmtNum(r.min)
	}
	if r.hasMax && f > r.max {
		return "Value must be no more than " + fmtNum(r.max)
	}
	return ""
}

// oneOf is Kafka's ValidString.in (case-sensitive unless fold).
type oneOf struct {
	vals []string
	fold bool
}

func in(vals ...string) validator     { return oneOf{vals: vals} }
func inFold(vals ...string) validator { return oneOf{vals: vals, fold: true} }
func (o oneOf) String() string        { return "[" + strings.Join(o.vals, ", ") + "]" }
func (o oneOf) check(v any) string {
	s, _ := v.(string)
	for _, x := range o.vals {
		if x == s || o.fold && strings.EqualFold(x, s) {
			return ""
		}
	}
	return "String must be one of: " + strings.Join(o.vals, ", ")
}

// listOf is Kafka's ValidList.in: every element must be one of vals.
type listOf struct {
	vals       []string
	allowEmpty bool
}

func listIn(allowEmpty bool, vals ...string) validator {
	return listOf{vals: vals, allowEmpty: allowEmpty}
}
func (l listOf) String() string { return "[" + strings.Join(l.vals, ", ") + "]" }
func (l listOf) check(v any) string {
	xs, _ := v.([]string)
	if len(xs) == 0 && !l.allowEmpty {
		return "Configuration must not be empty"
	}
	for _, x := range xs {
		ok := false
		for _, want := range l.vals {
			ok = ok || strings.EqualFold(x, want)
		}
		if !ok {
			return "Invalid value " + x + " for configuration: String must be one of: " + strings.Join(l.vals, ", ")
		}
	}
	return ""
}

// nonEmptyList rejects an empty list and duplicate entries
// (ValidList.anyNonDuplicateValues(false, false)).
type nonEmptyList struct{}

func (nonEmptyList) String() string { return "non-empty list without duplicates" }
func (nonEmptyList) check(v any) string {
	xs, _ := v.([]string)
	if len(xs) == 0 {
		return "Empty list not allowed"
	}
	seen := map[string]bool{}
	for _, x := range xs {
		if x == "" {
			return "Empty value not allowed in list"
		}
		if seen[x] {
			return "Duplicate entry " + x + " in list"
		}
		seen[x] = true
	}
	return ""
}

// noDuplicates rejects duplicate entries and allows an empty list
// (ValidList.anyNonDuplicateValues(true, false)).
type noDuplicates struct{}

func (noDuplicates) String() string { return "list without duplicates" }
func (noDuplicates) check(v any) string {
	xs, _ := v.([]string)
	if len(xs) == 0 {
		return ""
	}
	return nonEmptyList{}.check(v)
}

// onlyBuiltIn refuses list entries other than the named built-ins: where
// Kafka would load a class by name, sharq has only its own implementations.
func onlyBuiltIn(names ...string) func(v any) string {
	return func(v any) string {
		xs, _ := v.([]string)
		for _, x := range xs {
			if !slices.Contains(names, x) {
				return fmt.Sprintf("sharq has only the built-in %s; %q cannot be loaded", strings.Join(names, ", "), x)
			}
		}
		return ""
	}
}

// funcV wraps an ad hoc check.
type funcV struct {
	fn   func(v any) string
	desc string
}

func (f funcV) check(v any) string { return f.fn(v) }
func (f funcV) String() string     { return f.desc }

var gzipLevel = funcV{desc: "[1,...,9] or -1", fn: func(v any) string {
	n, _ := v.(int64)
	if n == -1 || n >= 1 && n <= 9 {
		return ""
	}
	return "Value must be between 1 and 9, or -1 (the codec default)"
}}

// assign stores a parsed value into a Config field pointer.
func assign(ptr any, v any) string {
	switch p := ptr.(type) {
	case *bool:
		*p = v.(bool)
	case *string:
		switch x := v.(type) {
		case []string:
			*p = strings.Join(x, ",")
		default:
			*p = x.(string)
		}
	case *[]string:
		*p = append([]string(nil), v.([]string)...)
	case *float64:
		*p = v.(float64)
	case *int64:
		*p = v.(int64)
	case *int32:
		n := v.(int64)
		if n < math.MinInt32 || n > math.MaxInt32 {
			return "Value must be between -2147483648 and 2147483647"
		}
		*p = int32(n)
	case *int16:
		n := v.(int64)
		if n < math.MinInt16 || n > math.MaxInt16 {
			return "Value must be no more than 32767"
		}
		*p = int16(n)
	default:
		return fmt.Sprintf("internal: unsupported field type %T", ptr)
	}
	return ""
}

// readField formats a Config field in Kafka's string form.
func readField(ptr any) string {
	switch p := ptr.(type) {
	case *bool:
		return strconv.FormatBool(*p)
	case *string:
		return *p
	case *[]string:
		return strings.Join(*p, ",")
	case *float64:
		return javaDouble(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *int32:
		return strconv.FormatInt(int64(*p), 10)
	case *int16:
		return strconv.FormatInt(int64(*p), 10)
	}
	return fmt.Sprint(ptr)
}
