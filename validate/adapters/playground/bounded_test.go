package playground

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
	"github.com/go-playground/validator/v10"
)

type bItem struct {
	SKU     string   `json:"sku" validate:"required"`
	Qty     int      `json:"qty" validate:"min=1"`
	Max     int      `json:"max" validate:"omitempty,gtefield=Qty"`
	Parts   []bPart  `json:"parts" validate:"max=2,dive"`
	Tags    []string `json:"tags" validate:"dive,min=2"`
	Pointer *bPart   `json:"ptr"`
}

type bPart struct {
	Name string `json:"name" validate:"required,alpha"`
}

type bOrder struct {
	Name  string  `json:"name" validate:"min=1"`
	Items []bItem `json:"items" validate:"min=1,dive"`
	Parts []bPart `json:"parts" validate:"dive"`
	Fixed [2]bPart
}

type bCross struct {
	Min   int          `json:"min"`
	Items []bCrossItem `json:"items" validate:"dive"`
}

type bCrossItem struct {
	N int `json:"n" validate:"gtecsfield=Min"`
}

// body builds a small JSON body for bOrder from fuzz bytes: items and
// parts with valid, missing, mistyped and unknown fields.
func body(data []byte) []byte {
	i := 0
	next := func() int {
		if i >= len(data) {
			return 0
		}
		i++
		return int(data[i-1])
	}
	scalars := []any{"", "a", "ab", "a1", 0.0, 1.0, 3.0, 1.5, nil, true, []any{}, map[string]any{}}
	part := func() any {
		m := map[string]any{}
		for n := next() % 3; n > 0; n-- {
			m[[]string{"name", "Name", "x"}[next()%3]] = scalars[next()%len(scalars)]
		}
		if next()%9 == 0 {
			return scalars[next()%len(scalars)]
		}
		return m
	}
	list := func(elem func() any) any {
		a := []any{}
		for n := next() % 7; n > 0; n-- {
			a = append(a, elem())
		}
		if next()%11 == 0 {
			return scalars[next()%len(scalars)]
		}
		return a
	}
	item := func() any {
		m := map[string]any{}
		for n := next() % 6; n > 0; n-- {
			switch k := []string{"sku", "qty", "max", "parts", "tags", "ptr", "SKU"}[next()%7]; k {
			case "parts":
				m[k] = list(part)
			case "tags":
				m[k] = list(func() any { return scalars[next()%4] })
			case "ptr":
				m[k] = part()
			default:
				m[k] = scalars[next()%len(scalars)]
			}
		}
		if next()%13 == 0 {
			return scalars[next()%len(scalars)]
		}
		return m
	}
	root := map[string]any{}
	for n := next()%5 + 1; n > 0; n-- {
		switch k := []string{"name", "items", "parts", "Fixed", "ITEMS", "x"}[next()%6]; k {
		case "items", "ITEMS":
			root[k] = list(item)
		case "parts", "Fixed":
			root[k] = list(part)
		default:
			root[k] = scalars[next()%len(scalars)]
		}
	}
	b, _ := json.Marshal(root)
	return b
}

// check holds the bounded path to the whole validation
// (validatetest.CompareLimits), with the pre-pass on every body, however
// small, and reports whether the pre-pass stopped early on b.
func check[T any](t *testing.T, s *Schema[T], b []byte, max int) (stopped bool) {
	t.Helper()
	smallBody, smallTree = 0, 0
	defer func() { smallBody, smallTree = 16, 8 }()
	if err := validatetest.CompareLimits(s, b, max); err != nil {
		t.Fatal(err)
	}
	return s.bounded(max, bodyNode(b)) != nil
}

// FuzzBounded is the differential test of the pre-pass (bounded.go)
// against the whole validation; its seeds run in go test.
func FuzzBounded(f *testing.F) {
	for _, seed := range []string{
		"\x04\x01\x06\x05\x01\x00\x02\x03\x00\x01\x04\x03\x02",
		"\x03\x01\x05\x05\x00\x03\x01\x03\x00\x00\x02\x01\x03\x02\x04\x05\x03\x01",
		"\x05\x01\x06\x03\x04\x02\x03\x01\x01\x02\x02\x02\x04\x06\x01\x05\x06\x07\x03\x02\x05\x00",
	} {
		for _, max := range []byte{1, 2, 3, 5, 8} {
			f.Add(max, []byte(seed))
		}
	}
	s := Struct[bOrder](nil)
	f.Fuzz(func(t *testing.T, max byte, data []byte) {
		check(t, s, body(data), int(max%12)+1)
	})
}

// TestBoundedSameIssues: many random bodies, each at several limits.
func TestBoundedSameIssues(t *testing.T) {
	s := Struct[bOrder](nil)
	stopped := 0
	validatetest.RandomInputs(7, 96, 3000, func(data []byte) {
		b := body(data)
		for _, max := range []int{1, 2, 4, 9} {
			if check(t, s, b, max) {
				stopped++
			}
		}
	})
	if stopped < 1000 {
		t.Errorf("the pre-pass stopped early only %d times: the test does not exercise it", stopped)
	}
}

// TestBoundedCrossStruct: an element type with a cross-struct tag never
// takes the pre-pass (alone, the element would be compared with itself).
func TestBoundedCrossStruct(t *testing.T) {
	if len(planOf(reflect.TypeFor[bCross]()).dives) != 0 {
		t.Error("a cross-struct tag takes the pre-pass")
	}
	if len(planOf(reflect.TypeFor[bOrder]()).dives) != 2 {
		t.Error("bOrder: want its two dive fields")
	}
	check(t, Struct[bCross](nil), []byte(`{"min":5,"items":[{"n":1},{"n":9},{"n":2}]}`), 1)
}

type bDeep struct {
	Items []bDeepItem `json:"items" validate:"dive"`
}

type bDeepItem struct {
	SKU   string  `json:"sku" validate:"required"`
	Parts []bPart `json:"parts" validate:"min=1,dive"`
}

// TestBoundedWork: a flood of failing elements, at the top level or in a
// dive nested in one element, stops at the limit on both paths: the
// allocations do not grow with the 200,000 elements (the whole path
// allocates at least one validator error per element).
func TestBoundedWork(t *testing.T) {
	flood := func(prefix, suffix string) []byte {
		var b strings.Builder
		b.WriteString(prefix + `{}`)
		for range 200_000 {
			b.WriteString(`,{}`)
		}
		b.WriteString(suffix)
		return []byte(b.String())
	}
	for _, c := range []struct {
		name string
		body []byte
		run  func(b []byte, tree any) (int, int)
	}{
		{"top", flood(`{"name":"","items":[`, `]}`), func(b []byte, tree any) (int, int) {
			s := Struct[bOrder](nil)
			return len(s.ValidateJSONLimit(b, 10).Issues), len(s.ValidateLimit(tree, 10).Issues)
		}},
		{"nested", flood(`{"items":[{"sku":"a","parts":[`, `]}]}`), func(b []byte, tree any) (int, int) {
			s := Struct[bDeep](nil)
			return len(s.ValidateJSONLimit(b, 10).Issues), len(s.ValidateLimit(tree, 10).Issues)
		}},
	} {
		tree, err := validate.DecodeJSON(c.body)
		if err != nil {
			t.Fatal(err)
		}
		if n1, n2 := c.run(c.body, tree); n1 != 10 || n2 != 10 {
			t.Errorf("%s: %d and %d issues, want 10", c.name, n1, n2)
		}
		if a := testing.AllocsPerRun(2, func() { c.run(c.body, tree) }); a > 5000 {
			t.Errorf("%s: %.0f allocations: the work is not bounded", c.name, a)
		}
	}
}

type bBinding struct {
	Items []struct {
		Name string `json:"name" binding:"required"`
	} `json:"items" validate:"dive"`
}

// TestBoundedOtherTagName: a validator that reads another tag than
// `validate` never takes the pre-pass (the plan is read from `validate`).
func TestBoundedOtherTagName(t *testing.T) {
	v := validator.New()
	v.SetTagName("binding")
	if readsValidateTag(v) || !readsValidateTag(Default()) {
		t.Error("tag probe")
	}
	smallBody = 0
	defer func() { smallBody = 16 }()
	// validator dives nowhere (no binding tag on Items), so it reports
	// nothing; a plan from the validate tag would check the elements
	res := Struct[bBinding](v).ValidateJSONLimit([]byte(`{"items":[{},{},{}]}`), 2)
	if len(res.Issues) != 0 {
		t.Errorf("issues from tags the validator does not read: %v", res.Issues)
	}
}
