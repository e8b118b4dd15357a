package validate

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"
	"unsafe"
)

// Constraint tags: the `validate:"..."` vocabulary of go-playground/
// validator (the words of rules_words.go), plus `pattern:"regexp"`,
// `doc:"..."` and `example:"..."`, compiled once per type into a plan
// (vplan, splan) that rules.go runs over a decoded value without
// reflection, and that schema.go turns into JSON Schema. A word
// fx does not know, a word that does not fit the field's type, a bad
// parameter or a bad regular expression is a *TagError when the plan is
// built: never ignored. docs/tags.md documents every word.

// TagError is a constraint tag that cannot be honoured, found when a
// schema is built (Struct, QueryStruct, CompileStruct, fx.Op). It names
// the struct type, the Go field and the word at fault.
type TagError struct {
	Type   reflect.Type // the struct type declaring the field
	Field  string       // the Go name of the field
	Word   string       // the word (or tag) at fault, as written
	Reason string       // what is wrong, in plain English
}

// Error returns "validate: type T, field F, word "w": reason".
func (e *TagError) Error() string {
	return fmt.Sprintf("validate: type %s, field %s, word %q: %s", e.Type, e.Field, e.Word, e.Reason)
}

// vplan checks one value: the rules of its words in tag order, then its
// elements (dive) and its struct fields.
type vplan struct {
	t    reflect.Type // the value's type, pointer removed
	kind tkind
	ptr  bool // reached through a pointer: nil is checked before the rules
	// rules in tag order; the first failure is the value's issue.
	rules []rule
	elem  *vplan  // dive: each element (map: each value)
	keys  *vplan  // dive keys ... endkeys: each map key
	sub   *splan  // struct fields
	size  uintptr // element size (slices, arrays)
	n     int     // array length
}

// rule is one compiled word.
type rule struct {
	word   string
	omit   bool // omitempty: skip the rest when the value has none
	req    bool // required
	ok     func(p unsafe.Pointer) bool
	msg    string
	schema func(m map[string]any) // its JSON Schema keywords; nil: none
}

// splan checks the fields of a struct that have rules.
type splan struct {
	fields []fplan
	done   bool // compiled (a recursive type meets itself before)
}

// fplan is one field of a struct plan.
type fplan struct {
	name    string // JSON name; "" for an embedded pointer struct (no path segment)
	off     uintptr
	v       *vplan // nil: no rules (documentation only)
	doc     string
	example string
}

var durationT = reflect.TypeFor[time.Duration]()

// planOf compiles the plan of t (once, in t's cache entry): nil when
// nothing in t has a rule.
func planOf(t reflect.Type) (*vplan, error) {
	e := infoOf(t)
	e.planOnce.Do(func() {
		c := &compiler{structs: map[reflect.Type]*splan{}}
		e.plan, e.structs = c.value(nil, "", t, nil), c.structs
		if e.planErr = errors.Join(c.errs...); e.planErr != nil {
			e.plan = nil
		}
	})
	return e.plan, e.planErr
}

// compiler builds plans; structs holds those built (or being built, for
// recursive types).
type compiler struct {
	structs map[reflect.Type]*splan
	errs    []error
}

func (c *compiler) fail(owner reflect.Type, field, word, format string, args ...any) {
	c.errs = append(c.errs, &TagError{Type: owner, Field: field, Word: word, Reason: fmt.Sprintf(format, args...)})
}

// value compiles the words for a value of type t, declared by field of
// owner (nil owner: the top-level type). It returns nil when there is
// nothing to check.
func (c *compiler) value(owner reflect.Type, field string, t reflect.Type, words []string) *vplan {
	v := &vplan{t: t}
	if t.Kind() == reflect.Pointer {
		v.ptr, v.t = true, t.Elem()
	}
	_, v.kind = classify(v.t)
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, param, _ := strings.Cut(w, "=")
		switch {
		case w == "":
			c.fail(owner, field, w, "empty word (two commas in a row, or a comma at an end)")
			continue
		case strings.Contains(w, "|"):
			c.fail(owner, field, w, "alternatives (|) are not supported; use the playground adapter")
			continue
		case name == "dive":
			if v.kind != tSlice && v.kind != tArray && v.kind != tMap {
				c.fail(owner, field, w, "dive needs a slice, array or map, not %s", v.t)
				return v.result()
			}
			rest := words[i+1:]
			if len(rest) > 0 && rest[0] == "keys" {
				end := indexOf(rest, "endkeys")
				if v.kind != tMap || end < 0 {
					c.fail(owner, field, "keys", "keys needs a map and a matching endkeys")
					return v.result()
				}
				v.keys = c.value(owner, field, v.t.Key(), rest[1:end])
				rest = rest[end+1:]
			}
			v.elem = c.value(owner, field, v.t.Elem(), rest)
			if v.elem == nil {
				v.elem = c.implicit(v.t.Elem())
			}
			v.size = v.t.Elem().Size()
			return v.result()
		case name == "keys" || name == "endkeys":
			c.fail(owner, field, w, "%s must directly follow dive", name)
			continue
		}
		r, reason := c.word(v, name, param)
		if reason != "" {
			c.fail(owner, field, w, "%s", reason)
			continue
		}
		r.word = w
		v.rules = append(v.rules, r)
	}
	switch v.kind {
	case tStruct:
		v.sub = c.structPlan(v.t)
	case tSlice, tArray, tMap:
		// The elements of a struct type are checked even without dive
		// (validator needs dive for that; see docs/tags.md).
		v.elem, v.size = c.implicit(v.t.Elem()), v.t.Elem().Size()
	}
	return v.result()
}

// implicit is the plan of an element with no words: its struct's fields.
func (c *compiler) implicit(t reflect.Type) *vplan {
	return c.value(nil, "", t, nil)
}

// result drops a plan with nothing to check.
func (v *vplan) result() *vplan {
	if v.kind == tArray {
		v.n = v.t.Len()
	}
	if len(v.rules) == 0 && v.elem == nil && v.keys == nil && v.sub == nil {
		return nil
	}
	return v
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// structPlan compiles the fields of struct t (nil: no field has a rule).
func (c *compiler) structPlan(t reflect.Type) *splan {
	p, ok := c.structs[t]
	if !ok {
		p = &splan{}
		c.structs[t] = p // a recursive type refers to it while it is built
		c.fields(p, t)
		c.unreachable(t)
		p.done = true
	}
	if p.done && !p.hasRules() {
		return nil // kept in c.structs for its documentation (doc, example)
	}
	return p
}

func (p *splan) hasRules() bool {
	for _, f := range p.fields {
		if f.v != nil {
			return true
		}
	}
	return false
}

// fields adds the fields of struct t, as the walk (fieldsOf) lists them,
// in declaration order: an embedded struct's in its place, those reached
// through an embedded pointer as one entry (checked when it is not nil).
func (c *compiler) fields(p *splan, t reflect.Type) {
	ms, _ := fieldsOf(t)
	var group *embedPtr
	for i := range ms {
		m := &ms[i]
		if m.via != nil { // compiled as the pointed struct's own fields
			if m.via != group {
				group = m.via
				if sub := c.structPlan(group.t); sub != nil && !group.norules {
					p.fields = append(p.fields, fplan{off: group.off,
						v: &vplan{t: group.t, kind: tStruct, ptr: true, sub: sub}})
				}
			}
			continue
		}
		tg := m.tags
		switch {
		case m.kind == mEmbed:
			if (tg.hasValidate && !tg.off()) || tg.hasPattern {
				c.fail(m.owner, m.f.Name, tg.validate+tg.pattern, "an embedded struct's fields are its outer object's in JSON: tag them, not the embedded struct")
			}
			continue
		case m.norules || tg.off():
			continue
		case m.kind == mIgnored:
			if tg.hasValidate || tg.hasPattern {
				c.fail(m.owner, m.f.Name, tg.validate+tg.pattern, "the field is not read from JSON (json:\"-\")")
			}
			continue
		}
		fp := c.field(m.owner, m.f, tg)
		fp.name, fp.off = m.name, m.off
		p.fields = append(p.fields, fp)
	}
}

// unreachable refuses a field of struct t's flattened fields that JSON
// can never set (an outer field, or an earlier embedded one, holds its
// JSON name) but whose tags require it: every body would be refused at
// a field that was sent. The error names both fields.
func (c *compiler) unreachable(t reflect.Type) {
	for _, h := range descOf(t).hidden {
		if !tagsOf(h.f).requires() {
			continue
		}
		c.fail(h.owner, h.f.Name, "required", "JSON never sets this field in %s: the key %q sets %s.%s",
			t, h.winner.name, h.winner.owner, h.winner.goName)
	}
}

// field compiles one field's tags (validate, pattern, doc, example).
func (c *compiler) field(owner reflect.Type, f reflect.StructField, tg ruleTags) fplan {
	v := c.value(owner, f.Name, f.Type, tg.words())
	if pat := tg.pattern; tg.hasPattern {
		re, err := regexp.Compile(pat)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case err != nil:
			c.fail(owner, f.Name, "pattern:"+pat, "bad regular expression: %v", err)
		case ft.Kind() != reflect.String:
			c.fail(owner, f.Name, "pattern:"+pat, "pattern needs a string field, not %s", ft)
		default:
			if v == nil {
				v = &vplan{t: ft, kind: tString, ptr: f.Type.Kind() == reflect.Pointer}
			}
			v.rules = append(v.rules, rule{word: "pattern", msg: "Must match the pattern " + pat,
				ok:     func(p unsafe.Pointer) bool { return re.MatchString(*(*string)(p)) },
				schema: func(m map[string]any) { addPattern(m, pat) }})
		}
	}
	return fplan{v: v, doc: tg.doc, example: tg.example}
}

// structDoc returns every field of struct t with its tags (rules or
// not), or nil when t's tags do not compile.
func structDoc(t reflect.Type) *splan {
	if _, err := planOf(t); err != nil {
		return nil
	}
	return infoOf(t).structs[t]
}
