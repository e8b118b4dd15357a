package validate

import (
	"reflect"
	"slices"
	"strings"
)

// Tags, the first stage: what a struct's tags say, read once. The field
// walk (fieldsOf) reads every field as encoding/json does (the json
// tag's name and options, embedded structs flattened in their place);
// tagsOf reads a field's constraint and documentation tags (ruleTags:
// the validate words, validator's escapes in their parameters
// (paramUnescape), pattern, doc, example); closedStruct reads the blank
// field's additionalProperties. Every struct tag validate reads is read
// here (TestTagsReadInTagsGo); the type description, the rule compiler
// and the JSON Schema read a struct through this walk and these tags.

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
// pattern, and its documentation tags, doc and example, as read once
// from the field (tagsOf): the type description (omitempty), the rule
// compiler (the words, the pattern, the documentation) and the field
// walk (validate:"-") read them here.
type ruleTags struct {
	validate, pattern       string // as written
	hasValidate, hasPattern bool
	doc, example            string
}

func tagsOf(f reflect.StructField) ruleTags {
	v, hasV := f.Tag.Lookup("validate")
	p, hasP := f.Tag.Lookup("pattern")
	return ruleTags{validate: v, pattern: p, hasValidate: hasV, hasPattern: hasP,
		doc: f.Tag.Get("doc"), example: f.Tag.Get("example")}
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

// fieldsOf walks struct t's fields once (cached): every exported
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

// paramUnescape applies validator's escapes in parameters: 0x2C is a
// comma, 0x7C a bar.
func paramUnescape(s string) string {
	return strings.NewReplacer("0x2C", ",", "0x7C", "|").Replace(s)
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
