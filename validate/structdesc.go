package validate

import (
	"encoding"
	"reflect"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// Type descriptions: what Struct and QueryStruct learn of a Go type, once,
// when the schema is built (and cached per type), so that validating a
// request never calls reflect on the type again. A tdesc says which JSON
// kind a value of the type must be and, for a struct, its JSON fields
// (json tags read as encoding/json reads them, embedded structs flattened).

type tkind uint8

const (
	tAny    tkind = iota // anything: interface, json.Unmarshaler, ",string" fields
	tString              // string
	tBool                // bool
	tInt                 // signed integer of bits
	tUint                // unsigned integer of bits
	tFloat               // float
	tSlice               // slice or array of elem
	tMap                 // map with string keys of elem
	tStruct              // struct with fields
	tTime                // time.Time: RFC 3339 string
	tText                // encoding.TextUnmarshaler: a string
	tBytes               // []byte: base64 string
)

type tdesc struct {
	t      reflect.Type // a struct's type (its constraint tags: describe_struct.go)
	kind   tkind
	bits   int
	elem   *tdesc
	fields []fdesc
	byName map[string]int
	// shadowed: two fields of the flattened struct have the same JSON
	// name (the first met is kept); which one a decoder sets follows
	// encoding/json's depth rules, which this flattening does not model.
	shadowed bool
	// hidden lists the fields that lost their JSON name to another field
	// of the flattened struct: JSON never sets them.
	hidden []hiddenField
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
	descCache        sync.Map // reflect.Type -> *tdesc
	jsonUnmarshalerT = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerT = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeT            = reflect.TypeFor[time.Time]()
)

func describe(t reflect.Type) *tdesc {
	if d, ok := descCache.Load(t); ok {
		return d.(*tdesc)
	}
	d := describeIn(t, map[reflect.Type]*tdesc{})
	descCache.Store(t, d)
	return d
}

func describeIn(t reflect.Type, seen map[reflect.Type]*tdesc) *tdesc {
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
	pt := reflect.PointerTo(t)
	switch {
	case t == timeT:
		d.kind = tTime
		return d
	case t.Implements(jsonUnmarshalerT) || pt.Implements(jsonUnmarshalerT):
		d.kind = tAny
		return d
	case t.Implements(textUnmarshalerT) || pt.Implements(textUnmarshalerT):
		d.kind = tText
		return d
	}
	switch t.Kind() {
	case reflect.String:
		d.kind = tString
	case reflect.Bool:
		d.kind = tBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.kind, d.bits = tInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.kind, d.bits = tUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		d.kind, d.bits = tFloat, t.Bits()
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(jsonUnmarshalerT) {
			d.kind = tBytes
			return d
		}
		d.kind, d.elem = tSlice, describeIn(t.Elem(), seen)
	case reflect.Array:
		d.kind, d.elem = tSlice, describeIn(t.Elem(), seen)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			d.kind = tAny // integer or text keys: the decoder decides
			return d
		}
		d.kind, d.elem = tMap, describeIn(t.Elem(), seen)
	case reflect.Struct:
		d.kind, d.t = tStruct, t
		d.byName = map[string]int{}
		addFields(d, t, seen, 0, 0, false)
	default:
		d.kind = tAny
	}
	return d
}

// addFields lists the JSON fields of struct t into d, flattening embedded
// structs without a name tag as encoding/json does (outer fields win).
func addFields(d *tdesc, t reflect.Type, seen map[reflect.Type]*tdesc, depth int, base uintptr, indirect bool) {
	if depth > 8 {
		d.shadowed = true // fields beyond are not listed: a decoder may still set them
		return
	}
	type embed struct {
		t        reflect.Type
		off      uintptr
		indirect bool
	}
	var embedded []embed
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, embed{ft, base + f.Offset, indirect || f.Type.Kind() == reflect.Pointer})
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fd := describeIn(f.Type, seen)
		str := strings.Contains(","+opts+",", ",string,")
		if str {
			fd = &tdesc{kind: tAny}
		}
		if i, dup := d.byName[name]; dup {
			d.shadowed = true
			d.hidden = append(d.hidden, hiddenField{f: f, owner: t, winner: d.fields[i]})
			continue
		}
		d.byName[name] = len(d.fields)
		omit := indirect || strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		d.fields = append(d.fields, fdesc{name: name, d: fd, ptr: f.Type.Kind() == reflect.Pointer, omit: omit,
			typ: f.Type, off: base + f.Offset, indirect: indirect, str: str, owner: t, goName: f.Name})
	}
	for _, e := range embedded {
		addFields(d, e.t, seen, depth+1, e.off, e.indirect)
	}
}

// field finds the field for key: exact match first, then case-insensitive
// (as encoding/json and go-json match).
func (d *tdesc) field(key string) (*tdesc, bool) {
	if i := d.exact(key); i >= 0 {
		return d.fields[i].d, true
	}
	for _, f := range d.fields {
		if strings.EqualFold(f.name, key) {
			return f.d, true
		}
	}
	return nil, false
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
