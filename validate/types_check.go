package validate

import (
	"encoding/base64"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fxhq/fx/internal/jsontree"
)

// The type check of Struct over the generic tree (Validate, and the
// Result a Decoder must match): every value is compared with the kind its
// tdesc expects, every mismatch is reported with its path, and query
// strings are coerced by the rules of Query.

// checkType reports every type mismatch of v against d and returns the
// value to decode (v itself, or its coercion in query mode). A null here
// (the root) leaves the zero value, as in encoding/json; a member's null
// is checkMember's.
func checkType(d *tdesc, v any, st *state) any {
	return checkMember(d, true, v, st)
}

// checkMember is checkType for a member of an object or an array: null
// (takesNull) says whether it takes null, which is otherwise worded as
// any other value of the wrong kind ("Expected a string, got null"). A
// hole (a mistyped value left out by lenientRules) is the zero value.
func checkMember(d *tdesc, null bool, v any, st *state) any {
	switch v.(type) {
	case nil:
		if null {
			return nil
		}
	case jsontree.Hole:
		return v
	}
	if s, ok := v.(string); ok && st.query {
		return coerce(d, s, st)
	}
	switch d.kind {
	case tAny:
		return v
	case tString:
		if _, ok := v.(string); !ok {
			st.add("Expected a string, got " + kindOf(v))
		}
	case tText:
		if _, ok := v.(string); !ok {
			st.add("Expected a string, got " + kindOf(v))
		}
	case tBytes:
		s, ok := v.(string)
		if !ok {
			st.add("Expected a base64-encoded string, got " + kindOf(v))
		} else if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			st.add("Expected a base64-encoded string")
		}
	case tTime:
		s, ok := v.(string)
		if !ok {
			st.add("Expected a date-time string (RFC 3339), got " + kindOf(v))
		} else if _, err := time.Parse(time.RFC3339, s); err != nil {
			st.add("Expected a date-time string (RFC 3339), got " + quoteInput(s))
		}
	case tBool:
		if _, ok := v.(bool); !ok {
			st.add("Expected a boolean, got " + kindOf(v))
		}
	case tInt, tUint, tFloat:
		f, ok := v.(float64)
		if !ok {
			st.add("Expected " + d.numberWord() + ", got " + kindOf(v))
			return v
		}
		checkNumber(d, f, st)
	case tSlice:
		a, ok := v.([]any)
		if !ok {
			st.add("Expected an array, got " + kindOf(v))
			return v
		}
		for i, e := range a {
			if st.full() {
				break
			}
			st.push(strconv.Itoa(i))
			checkMember(d.elem, d.elemNull, e, st)
			st.pop()
		}
	case tMap, tStruct:
		m, ok := v.(map[string]any)
		if !ok {
			st.add("Expected an object, got " + kindOf(v))
			return v
		}
		if d.kind == tStruct && st.query {
			return checkQueryStruct(d, m, st)
		}
		checkMembers(d, m, st)
	}
	return v
}

// checkMembers checks the members of the object m against d: each value
// of a map against its element type (keys in sorted order), or each field
// of a struct against the field's type.
func checkMembers(d *tdesc, m map[string]any, st *state) {
	if d.kind == tStruct {
		for k, f := range fieldsIn(d, m, st) {
			st.push(k)
			checkMember(f.d, f.null, m[k], st)
			st.pop()
		}
		return
	}
	for _, k := range sortedKeys(m) {
		if st.full() {
			break
		}
		st.push(k)
		checkMember(d.elem, d.elemNull, m[k], st)
		st.pop()
	}
}

func checkNumber(d *tdesc, f float64, st *state) {
	switch d.kind {
	case tInt, tUint:
		if f != math.Trunc(f) {
			st.add("Expected an integer, got " + fmtNum(f))
			return
		}
		lo, hi := d.intRange()
		if f < lo {
			st.add("Must be at least " + fmtNum(lo))
		} else if f > hi {
			st.add("Must be at most " + fmtNum(hi))
		}
	case tFloat:
		if d.bits == 32 && math.Abs(f) > math.MaxFloat32 {
			st.add("Number is too large")
		}
	}
}

// intRange is the range of the integer kind d: its Go type's, but within
// ±2^53 for 64 bits (what a JSON number holds exactly).
func (d *tdesc) intRange() (lo, hi float64) {
	switch {
	case d.bits == 64 && d.kind == tInt:
		return -maxSafeInt, maxSafeInt
	case d.bits == 64:
		return 0, maxSafeInt
	case d.kind == tInt:
		return -math.Ldexp(1, d.bits-1), math.Ldexp(1, d.bits-1) - 1
	}
	return 0, math.Ldexp(1, d.bits) - 1
}

// numberWord names the JSON value a numeric field expects, for issues.
func (d *tdesc) numberWord() string {
	if d.kind == tFloat {
		return "a number"
	}
	return "an integer"
}

// coerce turns one query string into the JSON value d expects.
func coerce(d *tdesc, s string, st *state) any {
	switch d.kind {
	case tInt, tUint, tFloat:
		f, ok := parseQueryNumber(s)
		if !ok {
			st.add("Expected " + d.numberWord() + ", got " + quoteInput(s))
			return nil
		}
		checkNumber(d, f, st)
		return f
	case tBool:
		return queryBool(s, st)
	case tSlice:
		return []any{coerce(d.elem, s, st)}
	case tMap, tStruct:
		st.add("Expected an object, got a string")
		return nil
	case tTime, tBytes:
		// a string in a body too: the same check (format, base64)
		st.query = false
		checkType(d, s, st)
		st.query = true
	}
	return s
}

// fieldsIn yields the keys of m that are fields of the struct d, in
// sorted order (the order of the issues), with their fields, until the
// issue limit is reached.
func fieldsIn(d *tdesc, m map[string]any, st *state) iter.Seq2[string, *fdesc] {
	return func(yield func(string, *fdesc) bool) {
		for _, k := range sortedKeys(m) {
			if st.full() {
				return
			}
			if f := d.field(k); f != nil && !yield(k, f) {
				return
			}
		}
	}
}

// checkQueryStruct applies the rules of Query to a query map.
func checkQueryStruct(d *tdesc, m map[string]any, st *state) any {
	out := make(map[string]any, len(m))
	for k, f := range fieldsIn(d, m, st) {
		fd := f.d
		st.push(k)
		switch raw := m[k].(type) {
		case string:
			if raw == "" && fd.kind != tString && fd.kind != tText && fd.kind != tAny {
				break // an empty value is absent
			}
			out[k] = coerce(fd, raw, st)
		case []string:
			if fd.kind != tSlice {
				st.add(fmt.Sprintf("Expected a single value, got %d", len(raw)))
				break
			}
			vals := make([]any, len(raw))
			for i, s := range raw {
				if st.full() {
					break
				}
				st.push(strconv.Itoa(i))
				vals[i] = coerce(fd.elem, s, st)
				st.pop()
			}
			out[k] = vals
		default:
			out[k] = checkMember(fd, f.null, raw, st)
		}
		st.pop()
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// streamType is checkType over bytes (body mode).
func streamType(d *tdesc, c *cursor, st *state) {
	b := c.peek()
	switch {
	case d.kind == tAny:
		c.SkipValue()
		return
	case d.kind == tSlice && b == '[':
		c.Pos++ // [
		for i := 0; c.peek() != ']'; i++ {
			if st.full() {
				return // pos is left inside the array: every caller stops
			}
			st.push(strconv.Itoa(i))
			streamMember(d.elem, d.elemNull, c, st)
			st.pop()
			if c.peek() == ',' {
				c.Pos++
			}
		}
		c.Pos++ // ]
		return
	case (d.kind == tMap || d.kind == tStruct) && b == '{':
		// sorted key order, as checkType visits the tree's map
		type member struct {
			key  string
			d    *tdesc
			null bool
			at   int
		}
		var ms []member
		c.members(func(key []byte, at int) {
			fd, null := d.elem, d.elemNull
			if d.kind == tStruct {
				f := d.field(bytesKey(key))
				if f == nil {
					return
				}
				fd, null = f.d, f.null
			}
			ms = append(ms, member{string(key), fd, null, at})
		})
		end := c.Pos
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		for _, m := range ms {
			if st.full() {
				break
			}
			c.Pos = m.at
			st.push(m.key)
			streamMember(m.d, m.null, c, st)
			st.pop()
		}
		c.Pos = end
		return
	}
	if v, ok := placeholder(b); ok {
		c.SkipValue()
		checkType(d, v, st)
		return
	}
	checkType(d, c.decode(), st)
}

// streamMember is streamType for a member of an object or an array: a
// null it does not take (null: takesNull) is worded by checkMember.
func streamMember(d *tdesc, null bool, c *cursor, st *state) {
	if !null && c.peek() == 'n' {
		c.SkipValue()
		checkMember(d, false, nil, st)
		return
	}
	streamType(d, c, st)
}
