package validate

import (
	"encoding"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// Type descriptions: what the package learns of a Go type, once, when a
// schema is built, so that validating a request never calls reflect on
// the type again. One walk reads a struct's fields (fieldsOf: json tags
// as encoding/json reads them, embedded structs flattened), and one cache
// entry per type (typeInfo) holds everything derived from it: the type's
// description (tdesc: which JSON kind a value must be, a struct's JSON
// fields), its constraint plan (plan_rules.go) and its decoding plan
// (plan_decode.go). The rules, the decoder and the JSON Schema all read them.

// tkind is the kind of a value: a tdesc's is the type as JSON reads it,
// a constraint plan's what its words apply to (both from classify).
type tkind uint8

const (
	tAny    tkind = iota // anything: interface, json.Unmarshaler, ",string" fields (rules: only required, omitempty)
	tString              // string
	tBool                // bool
	tInt                 // signed integer of bits
	tUint                // unsigned integer of bits
	tFloat               // float
	tSlice               // slice or array of elem
	tMap                 // map with string keys of elem
	tStruct              // struct with fields
	tTime                // time.Time: RFC 3339 string (rules: only required, omitempty)
	tText                // encoding.TextUnmarshaler: a string (rules, when not a Go string: only required, omitempty)
	tBytes               // []byte: base64 string
	tArray               // a Go array, as the rules see it (JSON reads it as tSlice)
)

type tdesc struct {
	t    reflect.Type // a struct's type (its constraint tags: schema.go)
	kind tkind
	bits int
	elem *tdesc
	// elemNull: an element (of a slice or map) may be null (takesNull)
	elemNull bool
	fields   []fdesc
	byName   map[string]int
	// shadowed: two fields of the flattened struct have the same JSON
	// name (the first met is kept); which one a decoder sets follows
	// encoding/json's depth rules, which this flattening does not model.
	shadowed bool
	// closed: a struct whose blank field says additionalProperties:"false"
	// (closedStruct): a body's key naming none of its fields is refused,
	// "Unknown key", instead of ignored.
	closed bool
	// hidden lists the fields that lost their JSON name to another field
	// of the flattened struct: JSON never sets them.
	hidden []hiddenField
	// byIndex lists the indexes of fields in the order of their index
	// sequences in the Go struct (an embedded struct's fields where it is
	// embedded): the order in which go-json and encoding/json try a key
	// matched ignoring case (fold).
	byIndex []int
}

// hiddenField is a struct field whose JSON name another field holds.
type hiddenField struct {
	f      reflect.StructField
	owner  reflect.Type // the struct declaring f
	winner fdesc        // the field the name sets
}

type fdesc struct {
	name string
	d    *tdesc
	ptr  bool // declared as a pointer: JSON null is its absence
	null bool // a request may send null for it (takesNull)
	// Where the field lives, for the one-pass decoder (decode.go): its Go
	// type and offset in the outermost struct; indirect when it is
	// reached through an embedded pointer (no fixed offset); str when its
	// json tag has the ",string" option.
	typ      reflect.Type
	off      uintptr
	indirect bool
	str      bool
	owner    reflect.Type // the struct declaring the field (an embedded one's, when flattened)
	goName   string
	// omit: encoding may leave the field out (omitempty or omitzero, or
	// promoted from an embedded pointer that may be nil)
	omit bool
}

var (
	types            sync.Map // reflect.Type -> *typeInfo
	jsonUnmarshalerT = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerT = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeT            = reflect.TypeFor[time.Time]()
)

// typeInfo is everything the package derives from one Go type, each part
// computed once, on first use (a part may use another: the plan reads
// the description, which reads the field walk).
type typeInfo struct {
	walkOnce sync.Once
	members  []member // a struct's fields, depth first (fieldsOf)
	deep     bool     // embedding goes deeper than the walk follows

	descOnce sync.Once
	d        *tdesc

	planOnce sync.Once
	plan     *vplan                  // the constraint plan (plan_rules.go); nil: no rule
	planErr  error                   // the *TagError of each tag that cannot be honoured
	structs  map[reflect.Type]*splan // every struct met, rules or not (documentation)

	decOnce sync.Once
	dec     *dnode // the decoding plan (plan_decode.go)
}

func infoOf(t reflect.Type) *typeInfo {
	if e, ok := types.Load(t); ok {
		return e.(*typeInfo)
	}
	e, _ := types.LoadOrStore(t, &typeInfo{})
	return e.(*typeInfo)
}

// descOf returns the description of t.
func descOf(t reflect.Type) *tdesc {
	e := infoOf(t)
	e.descOnce.Do(func() { e.d = descIn(t, map[reflect.Type]*tdesc{}) })
	return e.d
}

func descIn(t reflect.Type, seen map[reflect.Type]*tdesc) *tdesc {
	if d, ok := seen[t]; ok {
		return d
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if d, ok := seen[t]; ok {
		return d
	}
	d := &tdesc{}
	seen[t] = d
	d.kind, _ = classify(t)
	switch d.kind {
	case tInt, tUint, tFloat:
		d.bits = t.Bits()
	case tSlice: // before the element: a recursive one reads it
		d.elem = descIn(t.Elem(), seen)
	case tMap:
		if t.Key().Kind() != reflect.String {
			d.kind = tAny // integer or text keys: the decoder decides
			return d
		}
		d.elem = descIn(t.Elem(), seen)
	case tStruct:
		d.t = t
		d.byName = map[string]int{}
		addFields(d, t, seen)
	}
	if d.elem != nil {
		d.elemNull = takesNull(d.elem, t.Elem().Kind() == reflect.Pointer, false)
	}
	return d
}

// classify is the classification of a Go type t (pointer removed),
// read two ways: asJSON is the kind of value JSON sends for it (the type
// description's, which every type check, the decoder and the JSON Schema
// read), asRules the kind its constraint words apply to (the plan's).
// Where the two differ, this is the decision:
//
//   - a Go array is a JSON array (tSlice); its words see its fixed
//     length (tArray);
//   - time.Time is a date-time string (tTime) and, to its words, a value
//     that only required and omitempty apply to (tTime too);
//   - a type that decodes itself from text (encoding.TextUnmarshaler)
//     is a string in JSON (tText); its words check the decoded string
//     when its Go type is a string (tString), else only required and
//     omitempty apply (tText): a number's or a length's words would
//     describe the Go value, not the string a request sends;
//   - a type that decodes itself from JSON (json.Unmarshaler) is any
//     value (tAny); its words read the Go value it decodes to;
//   - []byte is a base64 string (tBytes); its words count its bytes
//     (tSlice), as validator's do.
func classify(t reflect.Type) (asJSON, asRules tkind) {
	shape := shapeOf(t)
	pt := reflect.PointerTo(t)
	switch {
	case t.Kind() == reflect.Pointer: // a pointer to a pointer: the rules see through one
		return tAny, tAny
	case t == timeT:
		return tTime, tTime
	case t.Implements(jsonUnmarshalerT) || pt.Implements(jsonUnmarshalerT):
		return tAny, shape
	case t.Implements(textUnmarshalerT) || pt.Implements(textUnmarshalerT):
		if shape == tString {
			return tText, tString
		}
		return tText, tText
	case shape == tSlice && t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(jsonUnmarshalerT):
		return tBytes, tSlice
	case shape == tArray:
		return tSlice, tArray
	}
	return shape, shape
}

// shapeOf is classify's reading of t's Go kind alone.
func shapeOf(t reflect.Type) tkind {
	switch t.Kind() {
	case reflect.String:
		return tString
	case reflect.Bool:
		return tBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return tInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return tUint
	case reflect.Float32, reflect.Float64:
		return tFloat
	case reflect.Slice:
		return tSlice
	case reflect.Array:
		return tArray
	case reflect.Map:
		return tMap
	case reflect.Struct:
		return tStruct
	}
	return tAny
}

// addFields lists the JSON fields of struct t into d, from the walk, in
// encoding/json's order: the first field met with a name keeps it (outer
// fields win), the others are hidden.
func addFields(d *tdesc, t reflect.Type, seen map[reflect.Type]*tdesc) {
	d.closed = closedStruct(t)
	ms, deep := fieldsOf(t)
	d.shadowed = deep
	order := make([]*member, 0, len(ms))
	for i := range ms {
		if ms[i].kind == mField {
			order = append(order, &ms[i])
		}
	}
	slices.SortStableFunc(order, jsonOrder)
	var paths [][]int // the index sequence of each of d.fields
	for _, m := range order {
		fd := descIn(m.f.Type, seen)
		str := strings.Contains(","+m.opts+",", ",string,")
		if str {
			fd = &tdesc{kind: tAny}
		}
		if i, dup := d.byName[m.name]; dup {
			d.shadowed = true
			d.hidden = append(d.hidden, hiddenField{f: m.f, owner: m.owner, winner: d.fields[i]})
			continue
		}
		d.byName[m.name] = len(d.fields)
		indirect := m.via != nil
		omit := indirect || strings.Contains(","+m.opts+",", ",omitempty,") || strings.Contains(","+m.opts+",", ",omitzero,")
		ptr := m.f.Type.Kind() == reflect.Pointer
		omitempty := !m.norules && m.tags.omitemptyFirst()
		d.fields = append(d.fields, fdesc{name: m.name, d: fd, ptr: ptr, null: takesNull(fd, ptr, omitempty), omit: omit,
			typ: m.f.Type, off: m.off, indirect: indirect, str: str, owner: m.owner, goName: m.f.Name})
		paths = append(paths, m.path)
	}
	d.byIndex = make([]int, len(d.fields))
	for i := range d.byIndex {
		d.byIndex[i] = i
	}
	slices.SortStableFunc(d.byIndex, func(a, b int) int { return slices.Compare(paths[a], paths[b]) })
}

// maxSafeInt is the largest integer a float64 holds exactly (2^53).
const maxSafeInt = 1 << 53

// intRange is the range of the integer kind k (tInt or tUint) of bits:
// its Go type's, but within ±2^53 for 64 bits, the integers a JSON
// number carries exactly (so the range of Integer too). The type checks,
// the decoder, Integer and the JSON Schema's minimum and maximum read it;
// rangeIssue words a number outside it.
func intRange(k tkind, bits int) (lo, hi int64) {
	switch {
	case bits == 64 && k == tInt:
		return -maxSafeInt, maxSafeInt
	case bits == 64:
		return 0, maxSafeInt
	case k == tInt:
		return -1 << (bits - 1), 1<<(bits-1) - 1
	}
	return 0, 1<<bits - 1
}

// takesNull is the answer to "may a request send null for this
// value", read by the request schemas (a "null" type) and by every type
// check (null refused with the wording of any other misfit: "Expected a
// string, got null"). A value of type d takes null when it is declared
// as a pointer (null is its absence), when it is a slice, map or []byte
// whose validate tag starts with omitempty (null is its empty value), or
// when d takes any value (an interface, a type that decodes itself).
// Anything else would silently read as its zero value, which the schema
// does not allow. Cost: computed once per type (fdesc.null,
// tdesc.elemNull); a check reads it only at a member that starts with
// 'n' (one byte comparison per member on the fast paths; measured by
// BenchmarkTypedBody, interleaved A/B: allocations unchanged, time within
// the noise of a loaded machine).
func takesNull(d *tdesc, ptr, omitempty bool) bool {
	switch d.kind {
	case tAny:
		return true
	case tSlice, tMap, tBytes:
		return ptr || omitempty
	}
	return ptr
}

// field finds the field for key: exact match first, then case-insensitive
// (fold); nil when none.
func (d *tdesc) field(key string) *fdesc {
	if i := d.exact(key); i >= 0 {
		return &d.fields[i]
	}
	if i := d.fold(key); i >= 0 {
		return &d.fields[i]
	}
	return nil
}

// fold returns the index of the field that key, which names none
// exactly, names ignoring case, as encoding/json and go-json match it:
// Unicode simple case folding (the Kelvin sign matches k), and of two
// such fields the first in the Go struct's field order (byIndex);
// -1 when none.
func (d *tdesc) fold(key string) int {
	for _, i := range d.byIndex {
		if strings.EqualFold(d.fields[i].name, key) {
			return i
		}
	}
	return -1
}

// exact returns the index of the field named key exactly, or -1.
func (d *tdesc) exact(key string) int {
	if len(d.fields) > 8 {
		if i, ok := d.byName[key]; ok {
			return i
		}
		return -1
	}
	for i := range d.fields { // a short list is read faster than a map
		if d.fields[i].name == key {
			return i
		}
	}
	return -1
}
