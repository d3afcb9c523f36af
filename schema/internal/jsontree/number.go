package jsontree

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Integral reports whether a number literal has neither fraction nor
// exponent: Jackson reads those as IntNode, LongNode or BigIntegerNode.
func Integral(lit string) bool {
	// NaN and the infinities only come from converting Java doubles.
	return !strings.ContainsAny(lit, ".eEINaif")
}

// Int64 returns an integral literal's value, false if it is not integral
// or does not fit (Jackson's canConvertToLong on an integer node).
func Int64(lit string) (int64, bool) {
	if !Integral(lit) {
		return 0, false
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	return n, err == nil
}

// Int32 is Int64 bounded to int32 (Jackson's IntNode, canConvertToInt).
func Int32(lit string) (int32, bool) {
	n, ok := Int64(lit)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

// Float64 is the literal as Java's Double.parseDouble reads it (overflow
// gives an infinity, as in Java).
func Float64(lit string) float64 {
	f, _ := strconv.ParseFloat(lit, 64)
	return f
}

// canonInt prints an integral literal as Jackson prints the integer node it
// reads ("-0" is 0, no leading zeros survive parsing anyway).
func canonInt(lit string) string {
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	var b big.Int
	if _, ok := b.SetString(lit, 10); ok {
		return b.String()
	}
	return lit
}

// NumberEqual is Jackson's node equality for two literals in the
// double-reading mode Avro uses.
func NumberEqual(a, b string) bool {
	ia, ib := Integral(a), Integral(b)
	if ia != ib {
		return false
	}
	if ia {
		return canonInt(a) == canonInt(b)
	}
	fa, fb := Float64(a), Float64(b)
	return fa == fb || (math.IsNaN(fa) && math.IsNaN(fb))
}

// JavaDouble formats f as Java's Double.toString does (shortest digits that
// round-trip, plain between 1e-3 and 1e7, computerized scientific notation
// outside).
func JavaDouble(f float64) string { return javaFloat(f, 64) }

// JavaFloat formats f as Java's Float.toString does.
func JavaFloat(f float32) string { return javaFloat(float64(f), 32) }

func javaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	neg := f < 0
	if neg {
		f = -f
	}
	// d.ddde±x
	e := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.Replace(mant, ".", "", 1)
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	if f >= 1e-3 && f < 1e7 {
		// plain notation
		if exp >= 0 {
			if len(digits) <= exp+1 {
				sb.WriteString(digits)
				sb.WriteString(strings.Repeat("0", exp+1-len(digits)))
				sb.WriteString(".0")
			} else {
				sb.WriteString(digits[:exp+1])
				sb.WriteByte('.')
				sb.WriteString(digits[exp+1:])
			}
		} else {
			sb.WriteString("0.")
			sb.WriteString(strings.Repeat("0", -exp-1))
			sb.WriteString(digits)
		}
		return sb.String()
	}
	sb.WriteByte(digits[0])
	sb.WriteByte('.')
	if len(digits) > 1 {
		sb.WriteString(digits[1:])
	} else {
		sb.WriteByte('0')
	}
	sb.WriteByte('E')
	sb.WriteString(strconv.Itoa(exp))
	return sb.String()
}

// BigDecimal formats a non-integral literal as Java's BigDecimal.toString
// prints new BigDecimal(literal): the literal's digits and scale are kept
// (1.50 stays 1.50), scientific notation when the exponent is positive or
// the adjusted exponent is below -6.
func BigDecimal(lit string) string {
	neg := strings.HasPrefix(lit, "-")
	lit = strings.TrimPrefix(lit, "-")
	mant, exps, hasExp := strings.Cut(strings.ToLower(lit), "e")
	exp := 0
	if hasExp {
		n, err := strconv.Atoi(exps)
		if err != nil {
			return lit // out of range: keep what was written
		}
		exp = n
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	coeff := strings.TrimLeft(intPart+frac, "0")
	if coeff == "" {
		coeff = "0"
	}
	scale := len(frac) - exp
	adjusted := -scale + len(coeff) - 1
	var sb strings.Builder
	if neg && coeff != "0" {
		sb.WriteByte('-')
	}
	if scale >= 0 && adjusted >= -6 {
		switch {
		case scale == 0:
			sb.WriteString(coeff)
		case len(coeff) > scale:
			sb.WriteString(coeff[:len(coeff)-scale])
			sb.WriteByte('.')
			sb.WriteString(coeff[len(coeff)-scale:])
		default:
			sb.WriteString("0.")
			sb.WriteString(strings.Repeat("0", scale-len(coeff)))
			sb.WriteString(coeff)
		}
		return sb.String()
	}
	sb.WriteByte(coeff[0])
	if len(coeff) > 1 {
		sb.WriteByte('.')
		sb.WriteString(coeff[1:])
	}
	sb.WriteByte('E')
	if adjusted >= 0 {
		sb.WriteByte('+')
	}
	sb.WriteString(strconv.Itoa(adjusted))
	return sb.String()
}
