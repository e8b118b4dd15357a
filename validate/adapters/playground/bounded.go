package playground

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fxhq/fx/validate"
	"github.com/go-playground/validator/v10"
)

// Bounded error work (fx SPEC rule 19). validator/v10 has no way to stop
// early: v.Struct checks every field of the decoded T and allocates one
// error per failing field, and the decode into T before it allocates
// every element. A 4 MiB body of 1.4 million empty items under
// `validate:"min=1,dive"` cost 3.6 s and 1 GB (BenchmarkHugeInvalidBody).
//
// So, before a large body is decoded, a pre-pass validates the elements
// of T's slice fields whose tag ends in "dive" (a slice or array of
// structs, at the top level of T) one at a time, stopping at max issues:
// each element alone is put into a T of its own ({"items":[element]},
// the element's raw bytes under the body's own key), decoded and
// type-checked by the same validate.Struct[T] as the body, and when it
// has no type error, checked with v.Struct; its issues (type errors, or
// else failing tags) get the full path (["items","7","sku"]).
//
// If the pre-pass finds max issues, they are the Result: the whole body
// has at least max issues, so the list is full either way and the body is
// never decoded whole. Otherwise its work is thrown away and the body
// takes the path it took without the pre-pass: below the limit the
// Result is Validate's, by construction (TestBoundedSameIssues).
//
// Why every issue of the pre-pass is an issue of the whole body: on the
// whole T, validator dives into the same element value with the same
// tags and, for a tag that reads only the element's own fields, fails on
// the same fields with the same tags; the type check is per value too,
// and an element with a type error has only those counted (on the whole
// body its tag failures below them would be filtered). Types
// whose elements hold a cross-struct tag (eqcsfield and the like, which
// read the top-level struct) never take the pre-pass. The pre-pass
// cannot see a struct-level or custom validation that reads
// FieldLevel.Top() or .Parent(); with one registered on the element type,
// the issues it reports above the limit are those it gives on the
// element alone. A body key that differs from the field's JSON name only
// in case, or that has escapes, disables the pre-pass for that body.
//
// Which issues are kept above the limit: those of the first elements, in
// field order then element order; without the pre-pass they were
// validator's first, in the same order. A huge array nested inside one
// element is validated with its element, not cut.
//
// Cost: a body of at most 16·max bytes, a tree array of at most 64
// elements, skips the pre-pass. On the attack
// body: 101 issues after 51 items. A large body with fewer than max
// issues has its dive elements decoded and checked twice.

// smallBody and smallTree: a body of at most smallBody·max bytes, a tree
// array of at most smallTree elements, skips the pre-pass (its whole work
// is small). Variables only so that the tests of this package can set
// them to 0.
var smallBody, smallTree = 16, 64

// plan is what the pre-pass knows about a struct type: its dive fields.
type plan struct {
	dives []dive
}

type dive struct {
	name  string       // JSON name, the key in the body
	elem  reflect.Type // struct type of an element
	index []int        // the field in T
}

var plans sync.Map // reflect.Type -> *plan (nil dives: no pre-pass)

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	p := &plan{}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Anonymous {
				continue
			}
			tags := strings.Split(f.Tag.Get("validate"), ",")
			if tags[len(tags)-1] != "dive" {
				continue
			}
			k := f.Type.Kind()
			e := f.Type.Elem()
			if k != reflect.Slice && k != reflect.Array || e.Kind() != reflect.Struct || e == reflect.TypeFor[time.Time]() {
				continue
			}
			if crossStruct(e, map[reflect.Type]bool{}) {
				p.dives = nil
				break
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p.dives = append(p.dives, dive{name: name, elem: e, index: f.Index})
		}
	}
	actual, _ := plans.LoadOrStore(t, p)
	return actual.(*plan)
}

// crossStruct reports whether t holds, at any depth, a tag that reads a
// field outside the struct it is on (eqcsfield=Inner.X and the like).
func crossStruct(t reflect.Type, seen map[reflect.Type]bool) bool {
	t = deref(t)
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = deref(t.Elem())
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return false
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if strings.Contains(f.Tag.Get("validate"), "csfield") || crossStruct(f.Type, seen) {
			return true
		}
	}
	return false
}

// bounded returns max issues found by the pre-pass, or nil when it found
// fewer. elements yields, for one dive field, each element as the result
// of validate.Struct[T] on a T holding only that element, in order.
func (s *Schema[T]) bounded(max int, elements func(d dive, yield func(one validate.Result) bool)) []validate.Issue {
	p := planOf(reflect.TypeFor[T]())
	if max <= 0 || len(p.dives) == 0 {
		return nil
	}
	var out []validate.Issue
	for _, d := range p.dives {
		i := -1
		elements(d, func(one validate.Result) bool {
			i++
			if one.Err() != nil {
				return true // the whole path reports it
			}
			if len(one.Issues) > 0 {
				// type errors: issues of the whole body too (at this
				// index); the element's tags are not checked (see above)
				for _, is := range one.Issues {
					if len(is.Path) < 2 {
						continue
					}
					is.Path = append([]string{d.name, strconv.Itoa(i)}, is.Path[2:]...)
					if out = append(out, is); len(out) >= max {
						return false
					}
				}
				return true
			}
			elem := reflect.ValueOf(one.Value).Elem().FieldByIndex(d.index).Index(0).Addr().Interface()
			verrs, ok := s.v.Struct(elem).(validator.ValidationErrors)
			if !ok {
				return true // valid, or a misuse the whole path reports
			}
			prefix := []string{d.name, strconv.Itoa(i)}
			for _, fe := range verrs {
				is := issue(fe, d.elem)
				is.Path = append(slices.Clip(prefix), is.Path...)
				if out = append(out, is); len(out) >= max {
					return false
				}
			}
			return true
		})
		if len(out) >= max {
			return out
		}
	}
	return nil
}

// treeElements is bounded's elements for the generic tree.
func (s *Schema[T]) treeElements(value any) func(d dive, yield func(validate.Result) bool) {
	return func(d dive, yield func(validate.Result) bool) {
		m, ok := value.(map[string]any)
		if !ok || !unique(d.name, func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		}) {
			return
		}
		a, _ := m[d.name].([]any)
		if len(a) <= smallTree {
			return // cheap whole: no pre-pass
		}
		for _, e := range a {
			if !yield(s.decode.ValidateLimit(map[string]any{d.name: []any{e}}, 1)) {
				return
			}
		}
	}
}

// unique reports whether no key but name itself equals name but for case
// (a decoder that matches keys without case would then read the field
// from another key).
func unique(name string, keys func(yield func(string) bool)) bool {
	ok := true
	keys(func(k string) bool {
		if k != name && strings.EqualFold(k, name) {
			ok = false
		}
		return ok
	})
	return ok
}

// bodyElements is bounded's elements for the raw body (accepted by
// CheckJSON: well formed, no duplicate key).
func (s *Schema[T]) bodyElements(body []byte) func(d dive, yield func(validate.Result) bool) {
	return func(d dive, yield func(validate.Result) bool) {
		c := &scanner{data: body}
		c.space()
		if c.peek() != '{' {
			return
		}
		var arr []byte
		escaped := false
		keys := func(yield func(string) bool) {
			c.members(func(key []byte, esc bool) bool {
				escaped = escaped || esc
				if string(key) == d.name {
					start := c.i
					c.value()
					arr = c.data[start:c.i]
				} else {
					c.value()
				}
				return yield(string(key))
			})
		}
		if !unique(d.name, keys) || escaped || len(arr) == 0 || arr[0] != '[' {
			return
		}
		// {"name":[element]}: the element's bytes under the body's key
		one := make([]byte, 0, 64)
		e := &scanner{data: arr, i: 1}
		for {
			e.space()
			if e.peek() == ']' || e.peek() == 0 {
				return
			}
			start := e.i
			e.value()
			one = append(one[:0], `{"`...)
			one = append(one, d.name...)
			one = append(one, `":[`...)
			one = append(one, e.data[start:e.i]...)
			one = append(one, `]}`...)
			if !yield(s.decode.ValidateJSONLimit(one, 1)) {
				return
			}
			e.space()
			if e.peek() == ',' {
				e.i++
			}
		}
	}
}

// scanner walks well-formed JSON text without decoding it.
type scanner struct {
	data []byte
	i    int
}

func (c *scanner) peek() byte {
	if c.i < len(c.data) {
		return c.data[c.i]
	}
	return 0
}

func (c *scanner) space() {
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// str skips a string at c.i and returns its contents (raw) and whether it
// has an escape.
func (c *scanner) str() ([]byte, bool) {
	c.i++ // '"'
	start, esc := c.i, false
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case '\\':
			esc = true
			c.i += 2
			continue
		case '"':
			c.i++
			return c.data[start : c.i-1], esc
		}
		c.i++
	}
	return c.data[start:], esc
}

// value skips one value.
func (c *scanner) value() {
	c.space()
	switch c.peek() {
	case '"':
		c.str()
	case '{', '[':
		depth := 0
		for c.i < len(c.data) {
			switch c.data[c.i] {
			case '"':
				c.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					c.i++
					return
				}
			}
			c.i++
		}
	default: // number, true, false, null
		for c.i < len(c.data) && !strings.ContainsRune(",]} \t\n\r", rune(c.data[c.i])) {
			c.i++
		}
	}
}

// members calls fn for each key of the object at c.i, with c.i at the
// start of its value; fn must skip the value. It stops when fn returns
// false.
func (c *scanner) members(fn func(key []byte, esc bool) bool) {
	c.i++ // '{'
	for {
		c.space()
		if c.peek() != '"' {
			return // '}' or the end
		}
		key, esc := c.str()
		c.space()
		c.i++ // ':'
		c.space()
		if !fn(key, esc) {
			return
		}
		c.space()
		if c.peek() == ',' {
			c.i++
		}
	}
}
