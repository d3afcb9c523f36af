package jsontree

import (
	"math"
	"sort"

	"sharq/schema/internal/javaorder"
)

// Floats says how a non-integral number is printed.
type Floats uint8

const (
	// Doubles reads floats as Java doubles and prints Double.toString, as
	// Jackson's default ObjectMapper does (Avro's parser).
	Doubles Floats = iota
	// Decimals reads floats as exact BigDecimals and prints
	// BigDecimal.toString (Confluent's JSON Schema mapper).
	Decimals
)

// Compact prints v without whitespace, as Jackson's writeValueAsString and
// JsonNode.toString do.
func Compact(v *Value, floats Floats) string {
	return string(AppendCompact(nil, v, floats))
}

// AppendCompact appends the compact form of v to b.
func AppendCompact(b []byte, v *Value, floats Floats) []byte {
	switch v.Kind {
	case Null:
		return append(b, "null"...)
	case Bool:
		if v.Bool {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case String:
		return AppendString(b, v.Str)
	case Number:
		return AppendNumber(b, v.Str, floats)
	case Array:
		b = append(b, '[')
		for i, it := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendCompact(b, it, floats)
		}
		return append(b, ']')
	case Object:
		b = append(b, '{')
		for i, m := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, m.Key)
			b = append(b, ':')
			b = AppendCompact(b, m.Value, floats)
		}
		return append(b, '}')
	}
	return b
}

// AppendNumber appends a number literal as Jackson prints the node it reads.
func AppendNumber(b []byte, lit string, floats Floats) []byte {
	if Integral(lit) {
		return append(b, canonInt(lit)...)
	}
	if floats == Decimals {
		return append(b, BigDecimal(lit)...)
	}
	f := Float64(lit)
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// Jackson's WRITE_NAN_AS_STRINGS, on by default.
		return AppendString(b, JavaDouble(f))
	}
	return append(b, JavaDouble(f)...)
}

const hexDigits = "0123456789ABCDEF"

// AppendString appends s quoted with Jackson's escapes: '"', '\\', the
// short forms \b \t \n \f \r, \u00XX for other control characters, all
// else (including '/', '<' and non-ASCII) as is.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\f':
			b = append(b, '\\', 'f')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// SortMembers orders object members as a Java TreeMap<String, ...> does:
// by UTF-16 code units.
func SortMembers(ms []Member) {
	sort.SliceStable(ms, func(i, j int) bool { return javaorder.Less(ms[i].Key, ms[j].Key) })
}
