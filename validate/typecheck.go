package validate

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/fxhq/fx/internal/jsontree"
)

// The type check of Struct: does a value fit the kind its tdesc expects?
// One walker reads bytes (the strict walk, typecheck_bytes.go: the one-pass
// decoder's guard, and the lister of every type issue of a body); the
// walker below reads the generic tree, for what is not bytes (Validate
// of a decoded value, the coerced strings of a query). Both report
// through the leaf checks of this file, one per kind, worded by one
// table (wants, and kindOf for what was sent), so a body gets the same
// issues whichever walker reads it.

// wants names, per kind, the JSON value a type of that kind takes: the
// "Expected ..." of every type issue.
var wants = [...]string{
	tString: "a string",
	tText:   "a string",
	tBytes:  "a base64-encoded string",
	tTime:   "a date-time string (RFC 3339)",
	tBool:   "a boolean",
	tInt:    "an integer",
	tUint:   "an integer",
	tFloat:  "a number",
	tSlice:  "an array",
	tMap:    "an object",
	tStruct: "an object",
}

// mismatch reports a value of the JSON kind got (kindOf's words) where d
// takes another.
func mismatch(d *tdesc, got string, st *state) {
	st.add("Expected " + wants[d.kind] + ", got " + got)
}

// kindAt is kindOf for the value whose first byte is b, in well-formed
// JSON.
func kindAt(b byte) string {
	switch b {
	case '"':
		return kindOf("")
	case 't', 'f':
		return kindOf(false)
	case 'n':
		return kindOf(nil)
	case '[':
		return kindOf([]any(nil))
	case '{':
		return kindOf(map[string]any(nil))
	}
	return kindOf(0.0)
}

// checkText is the leaf check of a string for a string kind: a time must
// be RFC 3339, a []byte base64 (every other string kind takes any
// string). With st nil it only answers; else it also reports why not.
// Cost: a time is parsed, a base64 string decoded (one allocation).
func checkText(d *tdesc, s string, st *state) bool {
	switch d.kind {
	case tBytes:
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			if st != nil {
				st.add("Expected " + wants[tBytes])
			}
			return false
		}
	case tTime:
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			if st != nil {
				st.add("Expected " + wants[tTime] + ", got " + quoteInput(s))
			}
			return false
		}
	}
	return true
}

// checkNumber is the leaf check of a number for a numeric kind: an
// integer kind takes a whole number within its range, a float32 one
// within its range. With st nil it only answers; else it also reports
// why not (numberIssue). Cost: no allocation unless it reports.
func checkNumber(d *tdesc, f float64, st *state) bool {
	if d.kind == tFloat {
		if d.bits == 64 || math.Abs(f) <= math.MaxFloat32 {
			return true
		}
	} else if lo, hi := intRange(d.kind, d.bits); f == math.Trunc(f) && f >= float64(lo) && f <= float64(hi) {
		return true
	}
	if st != nil {
		st.add(numberIssue(d, f))
	}
	return false
}

// numberIssue words why checkNumber refuses f.
func numberIssue(d *tdesc, f float64) string {
	if d.kind == tFloat {
		return "Number is too large"
	}
	if f != math.Trunc(f) {
		return fractionIssue(f)
	}
	lo, hi := intRange(d.kind, d.bits)
	return rangeIssue(f, float64(lo), float64(hi))
}

// checkType reports every type mismatch of the tree v against d and
// returns the value to decode (v itself, or its coercion in query mode).
// A null here (the root) leaves the zero value, as in encoding/json; a
// member's null is checkMember's.
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
		return coerce(d, nil, s, st)
	}
	switch d.kind {
	case tAny:
		return v
	case tString, tText, tBytes, tTime:
		if s, ok := v.(string); !ok {
			mismatch(d, kindOf(v), st)
		} else {
			checkText(d, s, st)
		}
	case tBool:
		if _, ok := v.(bool); !ok {
			mismatch(d, kindOf(v), st)
		}
	case tInt, tUint, tFloat:
		if f, ok := v.(float64); !ok {
			mismatch(d, kindOf(v), st)
		} else {
			checkNumber(d, f, st)
		}
	case tSlice:
		a, ok := v.([]any)
		if !ok {
			mismatch(d, kindOf(v), st)
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
			mismatch(d, kindOf(v), st)
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
		for _, k := range sortedKeys(m) {
			if st.full() {
				break
			}
			f := d.field(k)
			if f == nil && !d.closed {
				continue // an unknown key, ignored
			}
			st.push(k)
			if f != nil {
				checkMember(f.d, f.null, m[k], st)
			} else if _, hole := m[k].(jsontree.Hole); !hole {
				st.add(unknownKey) // a closed struct's (lenientRules leaves a hole)
			}
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
