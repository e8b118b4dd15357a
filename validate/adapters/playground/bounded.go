package playground

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fxhq/fx/internal/jsonscan"
	"github.com/fxhq/fx/validate"
	"github.com/go-playground/validator/v10"
)

// This file is one mechanism (the bounded pre-pass: plan per type, byte
// scan, element checks, path translation) whose parts only make sense
// together, which is why it runs a little past 600 lines.
//
// Bounded error work: validation stops at the issue limit. validator/v10 has
// no way to stop early: v.Struct checks every field of the decoded T and
// allocates one error per failing field, and the decode into T before it
// allocates every element. A 4 MiB body of 1.4 million empty items under
// `validate:"min=1,dive"` cost 3.6 s and 1 GB (BenchmarkHugeInvalidBody).
//
// So, before a large body is decoded, a pre-pass validates the elements
// of T's slice-of-struct fields whose tag ends in "dive" one at a time,
// stopping at max issues. Each element alone is put into a T of its own
// ({"items":[element]}: the element's raw bytes, or its tree value, under
// the body's own key), decoded and type-checked by the same
// validate.Struct[T] as the body, and when it has no type error, checked
// with v.Struct; its issues (type errors, or else failing tags) get the
// full path (["items","7","sku"]). Before an element is checked whole, the
// elements of its own dive fields are checked the same way
// ({"items":[{"parts":[element]}]}), so a flood nested in one element is
// cut too; their issues are then replaced by the element's.
//
// If the pre-pass finds max issues, they are the Result: the whole body
// has at least max issues, so the list is full either way and the body is
// never decoded whole. Otherwise its work is thrown away and the body
// takes the path it took without the pre-pass: below the limit the
// Result is Validate's, by construction (TestBoundedSameIssues,
// FuzzBounded: random bodies, both paths, against the whole validation).
//
// Why every issue of the pre-pass is an issue of the whole body:
//   - validator dives into a slice only when it passes its own tags (those
//     before "dive"); the pre-pass takes a field only when those read the
//     length alone (min, max, len, gt, lt and the like; required and
//     omitempty), and checks them first;
//   - it then checks each element value with the element type's tags, as
//     v.Struct on the element alone does, as long as no tag reads outside
//     the element: a type that holds a cross-struct tag (eqcsfield and the
//     like, which read the top-level struct) never takes the pre-pass.
//     The pre-pass cannot see a struct-level or custom validation that
//     reads FieldLevel.Top() or .Parent(): with one registered on the
//     element type, the issues above the limit are those it gives on the
//     element alone;
//   - the type check is per value too, and an element with a type error
//     has only those counted (on the whole body the tag failures below a
//     type error are dropped);
//   - go-json matches keys without case: a body key that differs from the
//     field's JSON name only in case, or that has an escape, disables the
//     pre-pass for that object; arrays ([N]T) are left out, as go-json
//     drops the elements past N.
//
// Which issues are kept above the limit: those of the first elements, in
// field order then element order; without the pre-pass they were
// validator's first, in the same order.
//
// Cost: a body of at most 16·max bytes, a tree of at most 8·max nodes,
// skips the pre-pass. On the attack body: 101 issues after 51 items and
// one scan of the body's bytes (BenchmarkHugeInvalidBody). A large body
// with fewer than max issues has its dive elements decoded and checked
// twice (three times for a dive inside a dive).

// smallBody and smallTree: a body of at most smallBody·max bytes, a tree
// of at most smallTree·max nodes, skips the pre-pass (its whole work is
// small). Variables only so that the tests of this package can set them
// to 0.
var smallBody, smallTree = 16, 8

// plan is what the pre-pass knows about a struct type: its dive fields.
type plan struct {
	dives []dive
}

type dive struct {
	name  string       // JSON name, the key in the body
	elem  reflect.Type // struct type of an element
	index []int        // the field in T
	// fits reports whether a slice of n elements passes the field's own
	// tags (those before "dive"): validator does not dive into a slice
	// that fails them. nil: no such tag.
	fits func(n int) bool
	// limit: fits gives the same answer for every n >= limit, so an
	// array is counted up to limit elements only.
	limit int
}

// lengthTags returns the check of the tags before "dive" when each of them
// reads only the length of the slice (ok false otherwise: the field does
// not take the pre-pass). required and omitempty do not matter: a slice
// with elements passes both.
func lengthTags(tags []string) (fits func(n int) bool, limit int, ok bool) {
	var checks []func(n int) bool
	for _, t := range tags {
		name, param, _ := strings.Cut(t, "=")
		if name == "" || name == "required" || name == "omitempty" {
			continue
		}
		p, err := strconv.Atoi(param)
		if err != nil || p < 0 {
			return nil, 0, false
		}
		limit = max(limit, p+1)
		var c func(n int) bool
		switch name {
		case "min", "gte":
			c = func(n int) bool { return n >= p }
		case "max", "lte":
			c = func(n int) bool { return n <= p }
		case "len", "eq":
			c = func(n int) bool { return n == p }
		case "gt":
			c = func(n int) bool { return n > p }
		case "lt":
			c = func(n int) bool { return n < p }
		default:
			return nil, 0, false
		}
		checks = append(checks, c)
	}
	if len(checks) == 0 {
		return nil, 0, true
	}
	return func(n int) bool {
		for _, c := range checks {
			if !c(n) {
				return false
			}
		}
		return true
	}, limit, true
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
			fits, limit, ok := lengthTags(tags[:len(tags)-1])
			if !ok {
				continue
			}
			k := f.Type.Kind()
			e := f.Type.Elem()
			// not arrays: go-json drops the elements past an array's length,
			// which validator then never sees
			if k != reflect.Slice || e.Kind() != reflect.Struct || e == reflect.TypeFor[time.Time]() {
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
			p.dives = append(p.dives, dive{name: name, elem: e, index: f.Index, fits: fits, limit: limit})
		}
	}
	actual, _ := plans.LoadOrStore(t, p)
	return actual.(*plan)
}

// probeType is a struct whose one field must fail `validate:"required"`.
var probeType = reflect.StructOf([]reflect.StructField{{
	Name: "X", Type: reflect.TypeFor[string](), Tag: `validate:"required"`,
}})

var tagProbes sync.Map // *validator.Validate -> bool

// readsValidateTag reports whether v reads the `validate` struct tag, the
// one plans are made from (not so after v.SetTagName("binding"): the
// pre-pass would then dive where v does not). Asked once per validator.
func readsValidateTag(v *validator.Validate) bool {
	if ok, found := tagProbes.Load(v); found {
		return ok.(bool)
	}
	_, ok := v.Struct(reflect.New(probeType).Interface()).(validator.ValidationErrors)
	tagProbes.Store(v, ok)
	return ok
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

// walkNode is a value of the body the pre-pass walks: the raw bytes of a
// JSON value, or a value of the generic tree.
type walkNode interface {
	// each calls fn with each element of the array under key name of
	// this object, in order, until fn returns false. It calls nothing
	// when there is no such array, or when another key equals name but
	// for case or has an escape (the decoder might read the field from
	// it).
	// fits (nil: none) is asked first, with the array's length, or
	// limit if that is more.
	each(name string, fits func(n int) bool, limit int, fn func(e walkNode) bool)
	// one is the value of a T that holds, down the chain of dive fields,
	// only this element ({"items":[{"parts":[element]}]}).
	one(chain []step) any
}

// step is one dive from a struct down to one of its elements.
type step struct {
	d dive
	i int
}

// walker is one run of the pre-pass.
type walker[T any] struct {
	s     *Schema[T]
	max   int
	out   []validate.Issue
	chain []step
}

// bounded returns max issues found by the pre-pass over root, or nil
// when it found fewer.
func (s *Schema[T]) bounded(max int, root walkNode) []validate.Issue {
	if !s.prepasses(max) {
		return nil
	}
	p := planOf(reflect.TypeFor[T]())
	w := &walker[T]{s: s, max: max}
	if !w.fields(p, root) {
		return nil
	}
	return w.out[:max:max]
}

// prepasses reports whether bounded does any work for a limit of max:
// T has dive fields and the validator reads the tags they are in.
func (s *Schema[T]) prepasses(max int) bool {
	return max > 0 && len(planOf(reflect.TypeFor[T]()).dives) > 0 && readsValidateTag(s.v)
}

// fields walks the elements of the dive fields of n (a struct of plan p)
// and reports whether the list is full.
func (w *walker[T]) fields(p *plan, n walkNode) bool {
	full := false
	for _, d := range p.dives {
		i := -1
		n.each(d.name, d.fits, d.limit, func(e walkNode) bool {
			i++
			w.chain = append(w.chain, step{d, i})
			full = w.element(d, e)
			w.chain = w.chain[:len(w.chain)-1]
			return !full
		})
		if full {
			return true
		}
	}
	return false
}

// element checks one element (the last step of w.chain): first the
// elements of its own dive fields, one at a time, then, if the list is
// not full, the whole element alone, whose issues replace theirs.
func (w *walker[T]) element(d dive, e walkNode) bool {
	mark := len(w.out)
	if w.fields(planOf(d.elem), e) {
		return true
	}
	w.out = w.out[:mark]
	path := make([]string, 0, 2*len(w.chain))
	for _, st := range w.chain {
		path = append(path, st.d.name, strconv.Itoa(st.i))
	}
	var res validate.Result
	switch v := e.one(w.chain).(type) {
	case []byte:
		res = w.s.decode.ValidateJSONLimit(v, w.max-len(w.out))
	default:
		res = w.s.decode.ValidateLimit(v, w.max-len(w.out))
	}
	if res.Err() != nil {
		return false // the whole path reports it
	}
	if len(res.Issues) > 0 {
		// type errors: issues of the whole body too (at these indices);
		// the element's tags are not checked (see above)
		for _, is := range res.Issues {
			if len(is.Path) < len(path) {
				continue // not reached: the issue is in the element
			}
			is.Path = append(slices.Clip(path), is.Path[len(path):]...)
			if w.out = append(w.out, is); len(w.out) >= w.max {
				return true
			}
		}
		return false
	}
	v := reflect.ValueOf(res.Value).Elem()
	for _, st := range w.chain {
		v = v.FieldByIndex(st.d.index).Index(0)
	}
	verrs, ok := w.s.v.Struct(v.Addr().Interface()).(validator.ValidationErrors)
	if !ok {
		return false // valid, or a misuse the whole path reports
	}
	for _, fe := range verrs {
		is := issue(fe, d.elem)
		is.Path = append(slices.Clip(path), is.Path...)
		if w.out = append(w.out, is); len(w.out) >= w.max {
			return true
		}
	}
	return false
}

// unique reports whether no key but name itself equals name but for case.
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

// treeNode is a node of the generic tree.
type treeNode struct{ v any }

func (n treeNode) each(name string, fits func(int) bool, limit int, fn func(walkNode) bool) {
	m, ok := n.v.(map[string]any)
	if !ok || !unique(name, func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		return
	}
	a, _ := m[name].([]any)
	if fits != nil && !fits(min(len(a), limit)) {
		return
	}
	for _, e := range a {
		if !fn(treeNode{e}) {
			return
		}
	}
}

func (n treeNode) one(chain []step) any {
	v := n.v
	for i := len(chain) - 1; i >= 0; i-- {
		v = map[string]any{chain[i].d.name: []any{v}}
	}
	return v
}

// bodyNode is the raw JSON text of a value of a body CheckJSON accepted
// (well formed, no duplicate key).
type bodyNode []byte

func (n bodyNode) each(name string, fits func(int) bool, limit int, fn func(walkNode) bool) {
	c := &jsonscan.Cursor{Data: n}
	c.SkipSpace()
	if c.Peek() != '{' {
		return
	}
	var arr []byte
	escaped := false
	if !unique(name, func(yield func(string) bool) {
		c.Members(func(raw []byte, esc bool) bool {
			escaped = escaped || esc
			key := raw[1 : len(raw)-1]
			start := c.Pos
			c.SkipValue()
			if string(key) == name {
				arr = c.Data[start:c.Pos]
			}
			return yield(string(key))
		})
	}) || escaped || len(arr) == 0 || arr[0] != '[' {
		return
	}
	if fits != nil && !fits(count(arr, limit)) {
		return
	}
	e := &jsonscan.Cursor{Data: arr}
	e.Elements(func() bool {
		start := e.Pos
		e.SkipValue()
		return fn(bodyNode(e.Data[start:e.Pos]))
	})
}

// count returns the number of elements of the array arr, or limit when
// it has more (limit <= 0: no limit). One pass over the bytes, counting
// the commas outside strings and nested values.
func count(arr []byte, limit int) int {
	n, depth, empty := 0, 0, true
	for i := 1; i < len(arr); i++ {
		switch arr[i] {
		case ' ', '\t', '\n', '\r':
		case '"':
			empty = false
			for i++; i < len(arr) && arr[i] != '"'; i++ {
				if arr[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			empty = false
			depth++
		case ']', '}':
			if depth == 0 {
				if empty {
					return 0
				}
				return n + 1
			}
			depth--
		case ',':
			if depth == 0 {
				if n++; limit > 0 && n >= limit {
					return limit
				}
			}
		default:
			empty = false
		}
	}
	return n
}

func (n bodyNode) one(chain []step) any {
	b := make([]byte, 0, len(n)+8*len(chain)+16)
	for _, st := range chain {
		b = append(b, `{"`...)
		b = append(b, st.d.name...)
		b = append(b, `":[`...)
	}
	b = append(b, n...)
	for range chain {
		b = append(b, `]}`...)
	}
	return b
}
