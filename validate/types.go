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
// fields), its constraint plan (rules.go) and its decoding plan
// (decode.go). The rules, the decoder and the JSON Schema all read them.

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
	t    reflect.Type // a struct's type (its constraint tags: jsonschema.go)
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
	types            sync.Map // reflect.Type -> *typeInfo: the one cache
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
	plan     *vplan                  // the constraint plan (rules.go); nil: no rule
	planErr  error                   // the *TagError of each tag that cannot be honoured
	structs  map[reflect.Type]*splan // every struct met, rules or not (documentation)

	decOnce sync.Once
	dec     *dnode // the decoding plan (decode.go)
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

// member is one field of a struct as the walk meets it, depth first in
// declaration order (the order of the constraint issues).
type member struct {
	kind    memberKind
	f       reflect.StructField
	owner   reflect.Type // the struct declaring f
	name    string       // the JSON name (fields)
	opts    string       // the json tag's options
	path    []int        // the field indices from the outer struct down to f
	off     uintptr      // f's offset from the outer struct, or from via's struct
	via     *embedPtr    // the outermost embedded pointer f is reached through; nil: none
	norules bool         // under an embedded struct tagged validate:"-"
	tags    ruleTags     // f's constraint tags
}

// ruleTags are the constraint tags of a struct field, validate and
// pattern, as read once from the field (tagsOf): the type description
// (omitempty), the rule compiler (the words, the pattern) and the field
// walk (validate:"-") read them here.
type ruleTags struct {
	validate, pattern       string // as written
	hasValidate, hasPattern bool
}

func tagsOf(f reflect.StructField) ruleTags {
	v, hasV := f.Tag.Lookup("validate")
	p, hasP := f.Tag.Lookup("pattern")
	return ruleTags{validate: v, pattern: p, hasValidate: hasV, hasPattern: hasP}
}

// off reports validate:"-": the field has no rule (an embedded struct:
// none of its fields has).
func (r ruleTags) off() bool { return r.validate == "-" }

// words are the words of the validate tag, in order (nil: none, or off).
func (r ruleTags) words() []string {
	if r.validate == "" || r.off() {
		return nil
	}
	return strings.Split(r.validate, ",")
}

// omitemptyFirst reports that the first word is omitempty (a slice or a
// map takes null then: takesNull).
func (r ruleTags) omitemptyFirst() bool {
	first, _, _ := strings.Cut(r.validate, ",")
	return first == "omitempty"
}

// requires reports that the value's own words (those before dive, which
// are its elements') hold required.
func (r ruleTags) requires() bool {
	words := r.words()
	if i := slices.Index(words, "dive"); i >= 0 {
		words = words[:i]
	}
	return slices.Contains(words, "required")
}

type memberKind uint8

const (
	mField   memberKind = iota // a JSON field
	mEmbed                     // an embedded struct, its fields flattened after it
	mIgnored                   // json:"-": never read from JSON
)

// embedPtr is an embedded pointer to a struct, whose fields are reached
// through it (no fixed offset from the outer struct).
type embedPtr struct {
	off     uintptr      // the pointer's offset in the outer struct
	t       reflect.Type // the struct it points to
	norules bool         // tagged (or under one tagged) validate:"-"
}

// fieldsOf is the one walk of struct t's fields (cached): every exported
// field, the fields of embedded structs without a JSON name flattened in
// their place, as encoding/json reads them.
func fieldsOf(t reflect.Type) (ms []member, deep bool) {
	e := infoOf(t)
	e.walkOnce.Do(func() { walkFields(&e.members, &e.deep, t, nil, 0, nil, false) })
	return e.members, e.deep
}

func walkFields(ms *[]member, deep *bool, t reflect.Type, path []int, base uintptr, via *embedPtr, norules bool) {
	if len(path) > 8 {
		*deep = true // fields beyond are not listed: a decoder may still set them
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		at := append(path[:len(path):len(path)], i)
		if tag != "-" && f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				tags := tagsOf(f)
				*ms = append(*ms, member{kind: mEmbed, f: f, owner: t, path: at, off: base + f.Offset, via: via, norules: norules, tags: tags})
				below := norules || tags.off()
				if f.Type.Kind() == reflect.Pointer {
					next := via
					if next == nil {
						next = &embedPtr{off: base + f.Offset, t: ft, norules: below}
					}
					walkFields(ms, deep, ft, at, 0, next, below)
				} else {
					walkFields(ms, deep, ft, at, base+f.Offset, via, below)
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if tag == "-" {
			*ms = append(*ms, member{kind: mIgnored, f: f, owner: t, path: at, via: via, norules: norules, tags: tagsOf(f)})
			continue
		}
		if name == "" {
			name = f.Name
		}
		*ms = append(*ms, member{f: f, owner: t, name: name, opts: opts, path: at, off: base + f.Offset, via: via, norules: norules, tags: tagsOf(f)})
	}
}

// jsonOrder orders the fields of a walk as encoding/json's flattening
// meets them: a struct's own fields before those of its embedded
// structs (the first met of two with one name keeps it).
func jsonOrder(a, b *member) int {
	for k := 0; ; k++ {
		aLeaf, bLeaf := k == len(a.path)-1, k == len(b.path)-1
		if a.path[k] != b.path[k] || aLeaf || bLeaf {
			switch {
			case aLeaf && !bLeaf:
				return -1
			case bLeaf && !aLeaf:
				return 1
			}
			return a.path[k] - b.path[k]
		}
	}
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

// classify is the one classification of a Go type t (pointer removed),
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

// closedStruct reports whether struct t refuses unknown keys in a body:
// a blank field tagged additionalProperties:"false", Huma's spelling,
//
//	_ struct{} `additionalProperties:"false"`
//
// The policy everywhere else is encoding/json's: a key that names no
// field is ignored (docs/validation.md, "Unknown keys").
func closedStruct(t reflect.Type) bool {
	for i := range t.NumField() {
		if f := t.Field(i); f.Name == "_" && f.Tag.Get("additionalProperties") == "false" {
			return true
		}
	}
	return false
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

// takesNull is the one answer to "may a request send null for this
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
