package protobuf

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// check makes protoc's checks of a linked file.
func (l *linker) check(lf *lfile) error {
	for _, m := range lf.msgs {
		if err := l.checkMessage(lf, m); err != nil {
			return err
		}
	}
	for _, e := range lf.enums {
		if err := l.checkEnum(lf, e); err != nil {
			return err
		}
	}
	for _, f := range lf.exts {
		if err := l.checkField(lf, f); err != nil {
			return err
		}
	}
	return nil
}

func (l *linker) checkMessage(lf *lfile, m *lmessage) error {
	// Ranges: reserved and extension ranges do not overlap each other.
	all := append(append([]lrange(nil), m.resRanges...), m.extRanges...)
	sort.Slice(all, func(i, j int) bool { return all[i].start < all[j].start })
	for i := 1; i < len(all); i++ {
		if all[i].start <= all[i-1].end {
			return l.errorf(lf, all[i].pos, "Ranges %s and %s overlap in message \"%s\".", rng(all[i-1]), rng(all[i]), m.full)
		}
	}
	resName := map[string]bool{}
	for _, n := range m.resNames {
		if resName[n] {
			return l.errorf(lf, m.pos, "Field name \"%s\" is reserved multiple times.", n)
		}
		resName[n] = true
	}
	byNum := map[int64]*lfield{}
	for _, f := range m.fields {
		if other := byNum[f.num]; other != nil {
			return l.errorf(lf, f.pos, "fields %s and %s both have the same tag %d (Field number %d has already been used in \"%s\" by field \"%s\").",
				other.name, f.name, f.num, f.num, m.full, other.name)
		}
		byNum[f.num] = f
		for _, r := range m.resRanges {
			if f.num >= r.start && f.num <= r.end {
				return l.errorf(lf, f.pos, "Field \"%s\" uses reserved number %d.", f.name, f.num)
			}
		}
		for _, r := range m.extRanges {
			if f.num >= r.start && f.num <= r.end {
				return l.errorf(lf, f.pos, "Extension range %s includes field \"%s\" (%d).", rng(r), f.name, f.num)
			}
		}
		if resName[f.name] {
			return l.errorf(lf, f.pos, "Field name \"%s\" is reserved.", f.name)
		}
		if err := l.checkField(lf, f); err != nil {
			return err
		}
	}
	if lf.syntax == "proto3" {
		// proto3 JSON names are unique (case-insensitively is not asked).
		seen := map[string]*lfield{}
		for _, f := range m.fields {
			jn := jsonCamel(f.name)
			if f.jsonName != nil {
				jn = *f.jsonName
			}
			if other := seen[jn]; other != nil {
				return l.errorf(lf, f.pos, "The JSON camel-case name of field \"%s\" conflicts with field \"%s\". This is not allowed in proto3.", f.name, other.name)
			}
			seen[jn] = f
		}
	}
	for _, f := range m.exts {
		if err := l.checkField(lf, f); err != nil {
			return err
		}
	}
	for _, n := range m.nested {
		if err := l.checkMessage(lf, n); err != nil {
			return err
		}
	}
	for _, e := range m.enums {
		if err := l.checkEnum(lf, e); err != nil {
			return err
		}
	}
	return nil
}

func rng(r lrange) string {
	if r.start == r.end {
		return strconv.FormatInt(r.start, 10)
	}
	return strconv.FormatInt(r.start, 10) + " to " + strconv.FormatInt(r.end, 10)
}

func isPackable(t int) bool {
	switch t {
	case typeString, typeBytes, typeMessage, typeGroup:
		return false
	}
	return true
}

func (l *linker) checkField(lf *lfile, f *lfield) error {
	if f.num >= 19000 && f.num <= 19999 {
		return l.errorf(lf, f.pos, "Field numbers 19000 through 19999 are reserved for the protocol buffer library implementation.")
	}
	switch lf.syntax {
	case "proto2":
		if !f.hasLabel && !f.isMap && f.oneof < 0 && (f.owner == nil || !f.owner.mapEntry) {
			return l.errorf(lf, f.pos, "Expected \"required\", \"optional\", or \"repeated\".")
		}
	case "proto3":
		if f.label == labelRequired {
			return l.errorf(lf, f.pos, "Required fields are not allowed in proto3.")
		}
		if f.def != nil {
			return l.errorf(lf, f.pos, "Explicit default values are not allowed in proto3.")
		}
		if f.typ == typeEnum && f.enumType != nil && f.enumType.file.syntax == "proto2" && !f.isExt {
			return l.errorf(lf, f.pos, "Enum type \"%s\" is not an open enum, but is used in \"%s\" which is a proto3 message type.", f.enumType.full, f.owner.full)
		}
		if f.isExt && !isOptionsMessage(f.extendeeT) {
			return l.errorf(lf, f.pos, "Extensions in proto3 are only allowed for defining options.")
		}
	case "editions":
		if f.hasLabel && f.label != labelRepeated {
			return l.errorf(lf, f.pos, "Label \"%s\" is not supported in editions. Use features.field_presence instead.", map[int]string{labelOptional: "optional", labelRequired: "required"}[f.label])
		}
	}
	if f.isMap {
		entry := f.msgType
		k, v := entry.fields[0], entry.fields[1]
		if err := l.resolveEntry(lf, k); err != nil {
			return err
		}
		if err := l.resolveEntry(lf, v); err != nil {
			return err
		}
		switch k.typ {
		case typeFloat, typeDouble, typeBytes, typeMessage, typeGroup, typeEnum:
			return l.errorf(lf, f.pos, "Key in map fields cannot be float/double, bytes or message types.")
		}
		if v.msgType != nil && v.msgType.mapEntry {
			return l.errorf(lf, f.pos, "Map values cannot be maps.")
		}
		if lf.syntax == "proto3" && v.typ == typeEnum && v.enumType != nil && v.enumType.file.syntax == "proto2" {
			return l.errorf(lf, f.pos, "Enum type \"%s\" is not an open enum, but is used in \"%s\" which is a proto3 message type.", v.enumType.full, entry.full)
		}
	}
	if f.def != nil {
		out, err := l.defaultValue(lf, f)
		if err != nil {
			return err
		}
		f.defOut = &out
	}
	if f.isExt {
		ext := f.extendeeT
		in := false
		for _, r := range ext.extRanges {
			if f.num >= r.start && f.num <= r.end {
				in = true
			}
		}
		if !in {
			return l.errorf(lf, f.pos, "\"%s\" does not declare %d as an extension number.", ext.full, f.num)
		}
		for _, other := range l.extensionsOf(ext) {
			if other != f && other.num == f.num {
				return l.errorf(lf, f.pos, "Extension number %d has already been used in \"%s\" by extension \"%s\".", f.num, ext.full, other.full)
			}
		}
		if f.label == labelRequired {
			return l.errorf(lf, f.pos, "The extension %s cannot be required.", f.full)
		}
	}
	for _, o := range f.opts {
		if o.parenthesized {
			continue
		}
		switch o.name {
		case "packed":
			if o.text == "true" && f.label != labelRepeated || !isPackable(f.typ) {
				return l.errorf(lf, o.pos, "[packed = true] can only be specified for repeated primitive fields.")
			}
		case "lazy", "unverified_lazy":
			if f.typ != typeMessage {
				return l.errorf(lf, o.pos, "[%s = true] can only be specified for submessage fields.", o.name)
			}
		case "jstype":
			switch f.typ {
			case typeInt64, typeUint64, typeSint64, typeFixed64, typeSfixed64:
			default:
				return l.errorf(lf, o.pos, "jstype is only allowed on int64, uint64, sint64, fixed64 or sfixed64 fields.")
			}
		}
	}
	return nil
}

// resolveEntry resolves a map entry's key or value type (the entry is
// made by the linker, so its fields are resolved when the map is checked).
func (l *linker) resolveEntry(lf *lfile, f *lfield) error {
	if f.typ != 0 {
		return nil
	}
	if t := scalarType(f.rawType); t != 0 {
		f.typ = t
		return nil
	}
	s, full, err := l.resolveType(lf, f.scope, f.rawType, f.pos)
	if err != nil {
		return err
	}
	f.typeName = "." + full
	if s.kind == symMessage {
		f.typ, f.msgType = typeMessage, s.msg
	} else {
		f.typ, f.enumType = typeEnum, s.enum
	}
	return nil
}

func isOptionsMessage(m *lmessage) bool {
	if m == nil {
		return false
	}
	switch m.full {
	case "google.protobuf.FileOptions", "google.protobuf.MessageOptions", "google.protobuf.FieldOptions", "google.protobuf.OneofOptions",
		"google.protobuf.EnumOptions", "google.protobuf.EnumValueOptions", "google.protobuf.ServiceOptions", "google.protobuf.MethodOptions",
		"google.protobuf.ExtensionRangeOptions":
		return true
	}
	return false
}

// extensionsOf are the extensions of a message in every linked file.
func (l *linker) extensionsOf(m *lmessage) []*lfield {
	var out []*lfield
	var walk func(ms []*lmessage)
	walk = func(ms []*lmessage) {
		for _, x := range ms {
			for _, e := range x.exts {
				if e.extendeeT == m {
					out = append(out, e)
				}
			}
			walk(x.nested)
		}
	}
	for _, f := range l.files {
		for _, e := range f.exts {
			if e.extendeeT == m {
				out = append(out, e)
			}
		}
		walk(f.msgs)
	}
	return out
}

func (l *linker) checkEnum(lf *lfile, e *lenum) error {
	if lf.syntax == "proto3" && e.values[0].num != 0 {
		return l.errorf(lf, e.values[0].pos, "The first enum value must be zero in proto3.")
	}
	if lf.syntax == "editions" && e.values[0].num != 0 && !closedEnum(lf, e) {
		return l.errorf(lf, e.values[0].pos, "The first enum value must be zero for open enums.")
	}
	resName := map[string]bool{}
	for _, n := range e.resNames {
		if resName[n] {
			return l.errorf(lf, e.pos, "Enum value \"%s\" is reserved multiple times.", n)
		}
		resName[n] = true
	}
	allowAlias := false
	aliasSet := false
	for _, o := range e.opts {
		if o.name == "allow_alias" && !o.parenthesized && o.kind == kindBoolean {
			allowAlias, aliasSet = o.text == "true", true
		}
	}
	byNum := map[int64]*lvalue{}
	hasAlias := false
	for _, v := range e.values {
		if other := byNum[v.num]; other != nil {
			if !allowAlias {
				return l.errorf(lf, v.pos, "\"%s\" uses the same enum value as \"%s\". If this is intended, set 'option allow_alias = true;' to the enum definition.", join(e.scope, v.name), join(e.scope, other.name))
			}
			hasAlias = true
		} else {
			byNum[v.num] = v
		}
		for _, r := range e.resRanges {
			if v.num >= r.start && v.num <= r.end {
				return l.errorf(lf, v.pos, "Enum value \"%s\" uses reserved number %d.", v.name, v.num)
			}
		}
		for _, n := range e.resNames {
			if n == v.name {
				return l.errorf(lf, v.pos, "Enum value \"%s\" is reserved.", v.name)
			}
		}
	}
	if aliasSet && allowAlias && !hasAlias {
		return l.errorf(lf, e.pos, "\"%s\" declares support for enum aliases but no enum values share field numbers. Please remove the unnecessary 'option allow_alias = true;' declaration.", e.full)
	}
	rs := append([]lrange(nil), e.resRanges...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
	for i := 1; i < len(rs); i++ {
		if rs[i].start <= rs[i-1].end {
			return l.errorf(lf, rs[i].pos, "Reserved ranges %s and %s overlap in enum \"%s\".", rng(rs[i-1]), rng(rs[i]), e.full)
		}
	}
	if lf.syntax == "proto3" {
		// Value names are unique once the enum's name prefix is stripped
		// and case ignored (they are the JSON names of the values).
		seen := map[string]*lvalue{}
		for _, v := range e.values {
			k := strippedName(e.name, v.name)
			if other := seen[k]; other != nil && other.num != v.num {
				return l.errorf(lf, v.pos, "Enum name %s has the same name as %s if you ignore case and strip out the enum name prefix (if any). (If you are using allow_alias, please assign the same number to each enum value name.)", v.name, other.name)
			}
			seen[k] = v
		}
	}
	return nil
}

// strippedName is protoc's EnumValueToPascalCase over the value name with
// the enum's name prefix removed, for the uniqueness check.
func strippedName(enumName, value string) string {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	prefix := norm(enumName)
	v := value
	// Strip the prefix, ignoring case and underscores.
	i, j := 0, 0
	for i < len(v) && j < len(prefix) {
		if v[i] == '_' {
			i++
			continue
		}
		if lower(v[i]) != prefix[j] {
			break
		}
		i++
		j++
	}
	if j == len(prefix) {
		for i < len(v) && v[i] == '_' {
			i++
		}
		if i < len(v) {
			v = v[i:]
		}
	}
	return norm(v)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// defaultValue checks a field's default against its type and returns it
// as the descriptor holds it.
func (l *linker) defaultValue(lf *lfile, f *lfield) (string, error) {
	text := *f.def
	fail := func() (string, error) {
		return "", l.errorf(lf, f.pos, "Field \"%s\": invalid default value %q for type %s.", f.name, text, scalarNames[f.typ])
	}
	if f.label == labelRepeated {
		return "", l.errorf(lf, f.pos, "Repeated fields can't have default values.")
	}
	switch f.typ {
	case typeMessage, typeGroup:
		return "", l.errorf(lf, f.pos, "Messages can't have default values.")
	case typeString:
		if f.defLit != kindString {
			return fail()
		}
		return text, nil
	case typeBytes:
		if f.defLit != kindString {
			return fail()
		}
		return cEscape(text), nil
	case typeBool:
		if f.defLit != kindBoolean {
			return fail()
		}
		return text, nil
	case typeEnum:
		if f.defLit != kindEnum {
			return fail()
		}
		for _, v := range f.enumType.values {
			if v.name == text {
				return text, nil
			}
		}
		return "", l.errorf(lf, f.pos, "Enum type \"%s\" has no value named \"%s\".", f.enumType.full, text)
	case typeFloat, typeDouble:
		switch f.defLit {
		case kindEnum:
			switch strings.ToLower(text) {
			case "inf", "infinity":
				return "inf", nil
			case "-inf", "-infinity":
				return "-inf", nil
			case "nan", "-nan":
				return "nan", nil
			}
			return fail()
		case kindNumber:
			v, ok := numberValue(text)
			if !ok {
				return fail()
			}
			if f.typ == typeFloat {
				return strconv.FormatFloat(float64(float32(v)), 'g', -1, 32), nil
			}
			return strconv.FormatFloat(v, 'g', -1, 64), nil
		}
		return fail()
	}
	if f.defLit != kindNumber {
		return fail()
	}
	v, ok := intValue(text, f.typ)
	if !ok {
		return fail()
	}
	return v, nil
}

// numberValue reads an int or float literal (with a sign).
func numberValue(text string) (float64, bool) {
	neg := strings.HasPrefix(text, "-")
	t := strings.TrimPrefix(text, "-")
	var v float64
	if n, ok := parseInt(t); ok {
		v = float64(n)
	} else {
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(t, "f"), "F"), 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			return 0, false
		}
		v = f
	}
	if neg {
		v = -v
	}
	return v, true
}

// intValue checks an integer literal against a type's range and prints it
// in decimal.
func intValue(text string, typ int) (string, bool) {
	neg := strings.HasPrefix(text, "-")
	n, ok := parseInt(strings.TrimPrefix(text, "-"))
	if !ok {
		return "", false
	}
	var lo, hi uint64 // magnitude limits for negative and positive
	switch typ {
	case typeInt32, typeSint32, typeSfixed32:
		lo, hi = 1<<31, 1<<31-1
	case typeInt64, typeSint64, typeSfixed64:
		lo, hi = 1<<63, 1<<63-1
	case typeUint32, typeFixed32:
		lo, hi = 0, math.MaxUint32
	case typeUint64, typeFixed64:
		lo, hi = 0, math.MaxUint64
	default:
		return "", false
	}
	if neg {
		if n > lo {
			return "", false
		}
		if n == 0 {
			return "0", true
		}
		return "-" + strconv.FormatUint(n, 10), true
	}
	if n > hi {
		return "", false
	}
	return strconv.FormatUint(n, 10), true
}

// cEscape is protoc's CEscape, which a bytes default is stored as.
func cEscape(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '"':
			sb.WriteString(`\"`)
		case '\'':
			sb.WriteString(`\'`)
		case '\\':
			sb.WriteString(`\\`)
		default:
			if c < 0x20 || c >= 0x7f {
				sb.WriteByte('\\')
				sb.WriteByte('0' + c>>6)
				sb.WriteByte('0' + (c>>3)&7)
				sb.WriteByte('0' + c&7)
			} else {
				sb.WriteByte(c)
			}
		}
	}
	return sb.String()
}

// closedEnum: an editions enum is open unless features.enum_type = CLOSED
// is set on it or its file.
func closedEnum(lf *lfile, e *lenum) bool {
	for _, opts := range [][]*option{e.opts, lf.f.options} {
		for _, o := range opts {
			parts, v := optionPath(o)
			if len(parts) == 2 && !parts[0].ext && parts[0].name == "features" && parts[1].name == "enum_type" {
				return v.text == "CLOSED"
			}
		}
	}
	return false
}
