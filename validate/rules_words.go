package validate

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// The words of the validate tag: each compiles, for one value kind, into
// a check over a pointer to the value, its message and its JSON Schema
// keywords (see docs/tags.md for the table). Semantics are
// go-playground/validator v10's.

// word compiles one word for a value described by v (its type, pointer
// removed). reason is non-empty when the word cannot be honoured.
func (c *compiler) word(v *vplan, name, param string) (r rule, reason string) {
	param = paramUnescape(param)
	if name == "omitempty" || name == "required" {
		if param != "" {
			return r, name + " takes no parameter"
		}
		if name == "omitempty" {
			return rule{omit: true}, ""
		}
		has := hasValue(v)
		if v.ptr {
			has = func(unsafe.Pointer) bool { return true } // a nil pointer is refused before the rules
		}
		return rule{req: true, ok: has, msg: "Required"}, ""
	}
	switch name {
	case "min", "gte", "max", "lte", "gt", "lt", "len", "eq", "ne":
		return compare(v, name, param)
	case "oneof":
		return oneOf(v, param)
	case "unique":
		return unique(v, param)
	}
	check, msg, schema, needParam, known := stringWord(name, param)
	switch {
	case !known:
		return r, "unknown word (fx supports the words listed in docs/tags.md; the playground adapter reaches the rest of go-playground's vocabulary)"
	case v.kind != tString:
		return r, name + " needs a string, not " + v.t.String()
	case needParam && param == "":
		return r, name + " needs a parameter (" + name + "=...)"
	case !needParam && param != "":
		return r, name + " takes no parameter"
	}
	return rule{ok: func(p unsafe.Pointer) bool { return check(*(*string)(p)) }, msg: msg, schema: schema}, ""
}

// stringWord returns the check of a string-only word.
func stringWord(name, param string) (check func(string) bool, msg string, schema func(map[string]any), needParam, known bool) {
	format := func(f string) func(map[string]any) { return func(m map[string]any) { m["format"] = f } }
	pattern := func(p string) func(map[string]any) { return func(m map[string]any) { addPattern(m, p) } }
	switch name {
	case "email":
		return isEmail, formatMessage(FormatEmail), format("email"), false, true
	case "url":
		return isURL, formatMessage(FormatURI), format("uri"), false, true
	case "uri":
		return isURI, "Must be a valid URI", format("uri-reference"), false, true
	case "uuid":
		return isUUID, formatMessage(FormatUUID), format("uuid"), false, true
	case "ip":
		return isIP, "Must be a valid IP address", nil, false, true
	case "ipv4":
		return isIPv4, formatMessage(FormatIPv4), format("ipv4"), false, true
	case "ipv6":
		return isIPv6, formatMessage(FormatIPv6), format("ipv6"), false, true
	case "cidr":
		return isCIDR, "Must be a valid CIDR address (address/prefix length)", nil, false, true
	case "hostname":
		return isHostname, formatMessage(FormatHostname), format("hostname"), false, true
	case "alpha":
		return isAlpha, "Must contain only ASCII letters", pattern("^[a-zA-Z]+$"), false, true
	case "alphanum":
		return isAlphanum, "Must contain only ASCII letters and digits", pattern("^[a-zA-Z0-9]+$"), false, true
	case "numeric":
		return isNumeric, "Must be a numeric string", pattern(`^[-+]?[0-9]+(\.[0-9]+)?$`), false, true
	case "hexadecimal":
		return isHexadecimal, "Must be a hexadecimal string", pattern("^(0[xX])?[0-9a-fA-F]+$"), false, true
	case "lowercase":
		return func(s string) bool { return isCase(s, unicode.ToLower, strings.ToLower) },
			"Must be a non-empty lowercase string", nil, false, true
	case "uppercase":
		return func(s string) bool { return isCase(s, unicode.ToUpper, strings.ToUpper) },
			"Must be a non-empty uppercase string", nil, false, true
	case "datetime":
		var sch func(map[string]any)
		switch param {
		case "2006-01-02T15:04:05Z07:00":
			sch = format("date-time")
		case "2006-01-02":
			sch = format("date")
		}
		return func(s string) bool { return isDatetime(s, param) },
			"Must be a date-time in the layout " + param, sch, true, true
	case "startswith":
		return func(s string) bool { return strings.HasPrefix(s, param) },
			"Must start with " + strconv.Quote(param), pattern("^" + regexpQuote(param)), true, true
	case "endswith":
		return func(s string) bool { return strings.HasSuffix(s, param) },
			"Must end with " + strconv.Quote(param), pattern(regexpQuote(param) + "$"), true, true
	case "contains":
		return func(s string) bool { return strings.Contains(s, param) },
			"Must contain " + strconv.Quote(param), pattern(regexpQuote(param)), true, true
	case "excludes":
		return func(s string) bool { return !strings.Contains(s, param) },
			"Must not contain " + strconv.Quote(param),
			func(m map[string]any) { m["not"] = map[string]any{"pattern": regexpQuote(param)} }, true, true
	}
	return nil, "", nil, false, false
}

// regexpQuote escapes the ECMA-262 metacharacters of s (JSON Schema's
// pattern dialect; the same set as RE2's).
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hasValue is validator's "has a value": a slice, map or pointer that is
// not nil, any other value that is not its type's zero value (a float's
// -0 is a value: reflect.Value.IsZero compares bits).
func hasValue(v *vplan) func(p unsafe.Pointer) bool {
	switch v.kind {
	case tString:
		return func(p unsafe.Pointer) bool { return len(*(*string)(p)) != 0 }
	case tInt:
		rd := intReader(v.t)
		return func(p unsafe.Pointer) bool { return rd(p) != 0 }
	case tUint:
		rd := uintReader(v.t)
		return func(p unsafe.Pointer) bool { return rd(p) != 0 }
	case tFloat:
		rd := floatReader(v.t)
		return func(p unsafe.Pointer) bool { return math.Float64bits(rd(p)) != 0 }
	case tBool:
		return func(p unsafe.Pointer) bool { return *(*bool)(p) }
	case tSlice, tMap:
		return func(p unsafe.Pointer) bool { return *(*unsafe.Pointer)(p) != nil }
	}
	t := v.t
	if t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer {
		return func(p unsafe.Pointer) bool { return !reflect.NewAt(t, p).Elem().IsNil() }
	}
	return func(p unsafe.Pointer) bool { return !reflect.NewAt(t, p).Elem().IsZero() }
}

func intReader(t reflect.Type) func(unsafe.Pointer) int64 {
	switch t.Size() {
	case 1:
		return func(p unsafe.Pointer) int64 { return int64(*(*int8)(p)) }
	case 2:
		return func(p unsafe.Pointer) int64 { return int64(*(*int16)(p)) }
	case 4:
		return func(p unsafe.Pointer) int64 { return int64(*(*int32)(p)) }
	}
	return func(p unsafe.Pointer) int64 { return *(*int64)(p) }
}

func uintReader(t reflect.Type) func(unsafe.Pointer) uint64 {
	switch t.Size() {
	case 1:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint8)(p)) }
	case 2:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint16)(p)) }
	case 4:
		return func(p unsafe.Pointer) uint64 { return uint64(*(*uint32)(p)) }
	}
	return func(p unsafe.Pointer) uint64 { return *(*uint64)(p) }
}

func floatReader(t reflect.Type) func(unsafe.Pointer) float64 {
	if t.Size() == 4 {
		return func(p unsafe.Pointer) float64 { return float64(*(*float32)(p)) }
	}
	return func(p unsafe.Pointer) float64 { return *(*float64)(p) }
}

// lengthReader reads the length validator compares: the runes of a
// string, the elements of a slice, array or map.
func lengthReader(v *vplan) func(unsafe.Pointer) int64 {
	switch v.kind {
	case tString:
		return func(p unsafe.Pointer) int64 { return int64(utf8.RuneCountInString(*(*string)(p))) }
	case tSlice:
		return func(p unsafe.Pointer) int64 { return int64((*[3]int)(p)[1]) }
	case tArray:
		n := int64(v.t.Len())
		return func(unsafe.Pointer) int64 { return n }
	case tMap:
		t := v.t
		return func(p unsafe.Pointer) int64 { return int64(reflect.NewAt(t, p).Elem().Len()) }
	}
	return nil
}

// op is a comparison of a tag word: the result of comparing the value
// with the parameter (-1, 0, 1) that passes.
type op struct {
	pass              func(c int) bool
	number, lengthMsg string // "Must be at least %s", "at least %s"
	keyword           string // JSON Schema keyword for numbers
}

var ops = map[string]op{
	"min": {func(c int) bool { return c >= 0 }, "Must be at least %s", "at least %s", "minimum"},
	"gte": {func(c int) bool { return c >= 0 }, "Must be at least %s", "at least %s", "minimum"},
	"max": {func(c int) bool { return c <= 0 }, "Must be at most %s", "at most %s", "maximum"},
	"lte": {func(c int) bool { return c <= 0 }, "Must be at most %s", "at most %s", "maximum"},
	"gt":  {func(c int) bool { return c > 0 }, "Must be greater than %s", "more than %s", "exclusiveMinimum"},
	"lt":  {func(c int) bool { return c < 0 }, "Must be less than %s", "fewer than %s", "exclusiveMaximum"},
	"len": {func(c int) bool { return c == 0 }, "Must equal %s", "exactly %s", "const"},
	"eq":  {func(c int) bool { return c == 0 }, "Must equal %s", "exactly %s", "const"},
	"ne":  {func(c int) bool { return c != 0 }, "Must not equal %s", "other than %s", "not"},
}

func cmp3[N int64 | uint64 | float64](a, b N) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	return 2 // NaN: no comparison passes but ne
}

// compare compiles min, max, len, eq, ne, gt, gte, lt, lte.
func compare(v *vplan, name, param string) (rule, string) {
	o := ops[name]
	bad := func(err error) (rule, string) {
		return rule{}, fmt.Sprintf("%s needs a number parameter for %s (%v)", name, v.t, err)
	}
	if param == "" {
		return rule{}, name + " needs a parameter (" + name + "=...)"
	}
	num := func(text string, val any) rule {
		return rule{msg: fmt.Sprintf(o.number, text), schema: func(m map[string]any) {
			if o.keyword == "not" {
				m["not"] = map[string]any{"const": val}
			} else {
				m[o.keyword] = val
			}
		}}
	}
	switch v.kind {
	case tString:
		if name == "eq" || name == "ne" {
			r := rule{msg: fmt.Sprintf(o.number, strconv.Quote(param)), schema: func(m map[string]any) {
				if name == "eq" {
					m["const"] = param
				} else {
					m["not"] = map[string]any{"const": param}
				}
			}}
			eq := name == "eq"
			r.ok = func(p unsafe.Pointer) bool { return (*(*string)(p) == param) == eq }
			return r, ""
		}
		fallthrough
	case tSlice, tArray, tMap:
		n, err := strconv.ParseInt(param, 0, 64)
		if err != nil {
			return bad(err)
		}
		rd := lengthReader(v)
		unit := map[tkind][2]string{tString: {"character", "characters"}, tSlice: {"item", "items"},
			tArray: {"item", "items"}, tMap: {"entry", "entries"}}[v.kind]
		count := fmt.Sprintf(o.lengthMsg, plural(int(n), unit[0], unit[1]))
		msg := "Must have " + count
		if v.kind == tString {
			msg = "Must be " + count + " long"
		}
		ok := func(p unsafe.Pointer) bool { return o.pass(cmp3(rd(p), n)) }
		if fast := lengthBound(v.kind, name, n); fast != nil {
			ok = fast
		}
		return rule{msg: msg, ok: ok, schema: lengthSchema(v.kind, name, n)}, ""
	case tInt:
		var n int64
		var err error
		if d, derr := time.ParseDuration(param); v.t == durationT && derr == nil {
			n = int64(d) // validator reads a Duration's parameter as a duration first
		} else {
			n, err = strconv.ParseInt(param, 0, 64)
		}
		if err != nil {
			return bad(err)
		}
		r, rd := num(strconv.FormatInt(n, 10), n), intReader(v.t)
		r.ok = func(p unsafe.Pointer) bool { return o.pass(cmp3(rd(p), n)) }
		if least, ordered := orderWord(name); ordered && v.t.Size() == 8 { // int, int64: one load, one compare
			if least {
				r.ok = func(p unsafe.Pointer) bool { return *(*int64)(p) >= n }
			} else {
				r.ok = func(p unsafe.Pointer) bool { return *(*int64)(p) <= n }
			}
		}
		return r, ""
	case tUint:
		n, err := strconv.ParseUint(param, 0, 64)
		if err != nil {
			return bad(err)
		}
		r, rd := num(strconv.FormatUint(n, 10), n), uintReader(v.t)
		r.ok = func(p unsafe.Pointer) bool { return o.pass(cmp3(rd(p), n)) }
		return r, ""
	case tFloat:
		f, err := strconv.ParseFloat(param, v.t.Bits())
		if err != nil {
			return bad(err)
		}
		r, rd := num(fmtNum(f), f), floatReader(v.t)
		r.ok = func(p unsafe.Pointer) bool { return o.pass(cmp3(rd(p), f)) }
		return r, ""
	case tBool:
		if name != "eq" && name != "ne" {
			break
		}
		b, err := strconv.ParseBool(param)
		if err != nil {
			return rule{}, fmt.Sprintf("%s needs true or false for a bool (%v)", name, err)
		}
		eq := name == "eq"
		r := num(strconv.FormatBool(b), b)
		r.ok = func(p unsafe.Pointer) bool { return (*(*bool)(p) == b) == eq }
		return r, ""
	}
	return rule{}, fmt.Sprintf("%s does not apply to %s", name, v.t)
}

// orderWord reports whether name is an inclusive bound, and which: min
// and gte (least), max and lte.
func orderWord(name string) (least, ordered bool) {
	switch name {
	case "min", "gte":
		return true, true
	case "max", "lte":
		return false, true
	}
	return false, false
}

// lengthBound is the check of an inclusive length bound of a string or a
// slice without the generic reader and comparison (nil for the other
// words and kinds). A string's bytes bound its runes from above, so the
// runes are counted only when the bytes do not decide.
func lengthBound(k tkind, name string, n int64) func(unsafe.Pointer) bool {
	least, ordered := orderWord(name)
	switch {
	case !ordered:
		return nil
	case k == tString && least:
		return func(p unsafe.Pointer) bool {
			s := *(*string)(p)
			return int64(len(s)) >= n && int64(utf8.RuneCountInString(s)) >= n
		}
	case k == tString:
		return func(p unsafe.Pointer) bool {
			s := *(*string)(p)
			return int64(len(s)) <= n || int64(utf8.RuneCountInString(s)) <= n
		}
	case k == tSlice && least:
		return func(p unsafe.Pointer) bool { return int64((*[3]int)(p)[1]) >= n }
	case k == tSlice:
		return func(p unsafe.Pointer) bool { return int64((*[3]int)(p)[1]) <= n }
	}
	return nil
}

// lengthSchema is the JSON Schema of a length bound.
func lengthSchema(k tkind, name string, n int64) func(map[string]any) {
	noun := map[tkind]string{tString: "Length", tSlice: "Items", tArray: "Items", tMap: "Properties"}[k]
	return func(m map[string]any) {
		switch name {
		case "min", "gte":
			m["min"+noun] = n
		case "gt":
			m["min"+noun] = n + 1
		case "max", "lte":
			m["max"+noun] = n
		case "lt":
			m["max"+noun] = max(n-1, 0)
		case "len", "eq":
			m["min"+noun], m["max"+noun] = n, n
		}
	}
}

// oneOf compiles oneof: the values are split on white space, a value in
// single quotes may hold spaces (validator's reading).
func oneOf(v *vplan, param string) (rule, string) {
	vals := splitOneOf(param)
	if len(vals) == 0 {
		return rule{}, "oneof needs at least one value"
	}
	enum := make([]any, 0, len(vals))
	var r rule
	switch v.kind {
	case tString:
		for _, s := range vals {
			enum = append(enum, s)
		}
		r.ok = func(p unsafe.Pointer) bool { return slices.Contains(vals, *(*string)(p)) }
		r.msg = "Must be one of: " + quoteList(vals)
	case tInt, tUint:
		// a value matches when its decimal form is one of vals: only the
		// canonical forms can
		var ints []int64
		var uints []uint64
		for _, s := range vals {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(n, 10) == s && v.kind == tInt {
				ints, enum = append(ints, n), append(enum, n)
			}
			if n, err := strconv.ParseUint(s, 10, 64); err == nil && strconv.FormatUint(n, 10) == s && v.kind == tUint {
				uints, enum = append(uints, n), append(enum, n)
			}
		}
		if v.kind == tInt {
			rd := intReader(v.t)
			r.ok = func(p unsafe.Pointer) bool { return slices.Contains(ints, rd(p)) }
		} else {
			rd := uintReader(v.t)
			r.ok = func(p unsafe.Pointer) bool { return slices.Contains(uints, rd(p)) }
		}
		r.msg = "Must be one of: " + strings.Join(vals, ", ")
	default:
		return rule{}, "oneof needs a string or integer, not " + v.t.String()
	}
	r.schema = func(m map[string]any) { m["enum"] = slices.Clone(enum) }
	return r, ""
}

func splitOneOf(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if isSpace(s[i]) {
			i++
			continue
		}
		j := i + 1
		if s[i] == '\'' {
			if k := strings.IndexByte(s[i+1:], '\''); k >= 0 {
				out = append(out, strings.ReplaceAll(s[i:i+k+2], "'", ""))
				i += k + 2
				continue
			}
		}
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		out = append(out, strings.ReplaceAll(s[i:j], "'", ""))
		i = j
	}
	return out
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// unique compiles unique for a slice or array of strings, numbers or
// booleans (map values: the same). Up to 32 elements are compared pairwise
// (no allocation); longer lists use a set.
func unique(v *vplan, param string) (rule, string) {
	if param != "" {
		return rule{}, "unique=field is not supported; use the playground adapter"
	}
	if v.kind != tSlice && v.kind != tArray && v.kind != tMap {
		return rule{}, "unique needs a slice, array or map, not " + v.t.String()
	}
	et := v.t.Elem()
	_, ek := classify(et)
	var key func(p unsafe.Pointer) any
	switch ek {
	case tString:
		key = func(p unsafe.Pointer) any { return *(*string)(p) }
	case tInt:
		rd := intReader(et)
		key = func(p unsafe.Pointer) any { return rd(p) }
	case tUint:
		rd := uintReader(et)
		key = func(p unsafe.Pointer) any { return rd(p) }
	case tFloat:
		rd := floatReader(et)
		key = func(p unsafe.Pointer) any { return rd(p) }
	case tBool:
		key = func(p unsafe.Pointer) any { return *(*bool)(p) }
	default:
		return rule{}, "unique needs elements of a string, number or boolean type, not " + et.String()
	}
	r := rule{msg: "Must not contain duplicates", schema: func(m map[string]any) { m["uniqueItems"] = true }}
	if v.kind == tMap {
		t := v.t
		r.ok = func(p unsafe.Pointer) bool {
			seen := map[any]bool{}
			for it := reflect.NewAt(t, p).Elem().MapRange(); it.Next(); {
				val := reflect.New(et).Elem()
				val.SetIterValue(it)
				k := key(val.Addr().UnsafePointer())
				if seen[k] {
					return false
				}
				seen[k] = true
			}
			return true
		}
		return r, ""
	}
	size, n := et.Size(), -1
	if v.kind == tArray {
		n = v.t.Len()
	}
	eq := elemEqual(ek, et)
	r.ok = func(p unsafe.Pointer) bool {
		data, count := p, n
		if n < 0 {
			data, count = *(*unsafe.Pointer)(p), (*[3]int)(p)[1]
		}
		at := func(i int) unsafe.Pointer { return unsafe.Add(data, uintptr(i)*size) }
		if count <= 32 {
			for i := 1; i < count; i++ {
				for j := 0; j < i; j++ {
					if eq(at(i), at(j)) {
						return false
					}
				}
			}
			return true
		}
		seen := make(map[any]bool, count)
		for i := range count {
			k := key(at(i))
			if seen[k] {
				return false
			}
			seen[k] = true
		}
		return true
	}
	return r, ""
}

// elemEqual compares two elements of kind k as map keys compare them.
func elemEqual(k tkind, t reflect.Type) func(a, b unsafe.Pointer) bool {
	switch k {
	case tString:
		return func(a, b unsafe.Pointer) bool { return *(*string)(a) == *(*string)(b) }
	case tInt:
		rd := intReader(t)
		return func(a, b unsafe.Pointer) bool { return rd(a) == rd(b) }
	case tUint:
		rd := uintReader(t)
		return func(a, b unsafe.Pointer) bool { return rd(a) == rd(b) }
	case tFloat:
		rd := floatReader(t)
		return func(a, b unsafe.Pointer) bool { return rd(a) == rd(b) }
	}
	return func(a, b unsafe.Pointer) bool { return *(*bool)(a) == *(*bool)(b) }
}
