package validate

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

type nullNested struct {
	A string `json:"a"`
}

// nullKinds has a field of each way a request's null is taken or refused
// (takesNull).
type nullKinds struct {
	S      string            `json:"s"`
	N      int               `json:"n"`
	F      float64           `json:"f"`
	OK     bool              `json:"ok"`
	When   time.Time         `json:"when"`
	IP     net.IP            `json:"ip"` // a text unmarshaler: a string
	Raw    []byte            `json:"raw"`
	RawO   []byte            `json:"rawo" validate:"omitempty"`
	L      []int             `json:"l"`
	LO     []int             `json:"lo" validate:"omitempty,min=1"`
	LP     *[]int            `json:"lp"`
	M      map[string]int    `json:"m"`
	MO     map[string]int    `json:"mo" validate:"omitempty"`
	Sub    nullNested        `json:"sub"`
	SubP   *nullNested       `json:"subp"`
	P      *string           `json:"p"`
	A      any               `json:"any"`
	Quoted int               `json:"quoted,string"`
	Elems  []string          `json:"elems"`
	PElems []*string         `json:"pelems"`
	Vals   map[string]int    `json:"vals"`
	PVals  map[string]*int   `json:"pvals"`
	Subs   []nullNested      `json:"subs"`
	Deep   map[string][]bool `json:"deep"`
}

// TestNullOnlyWhereTheSchemaTakesIt: a request's null is taken exactly
// where the request schema lists the "null" type (or takes any value),
// and refused elsewhere by every type check alike (the one-pass decoder,
// the strict walk, the checks over bytes and over the tree), with the
// wording of any other misfit at the null's path.
func TestNullOnlyWhereTheSchemaTakesIt(t *testing.T) {
	cases := []struct {
		body string
		path []string // the null's
		want string   // its issue; "" when null is taken
	}{
		{`{"s":null}`, []string{"s"}, "Expected a string, got null"},
		{`{"n":null}`, []string{"n"}, "Expected an integer, got null"},
		{`{"f":null}`, []string{"f"}, "Expected a number, got null"},
		{`{"ok":null}`, []string{"ok"}, "Expected a boolean, got null"},
		{`{"when":null}`, []string{"when"}, "Expected a date-time string (RFC 3339), got null"},
		{`{"ip":null}`, []string{"ip"}, "Expected a string, got null"},
		{`{"raw":null}`, []string{"raw"}, "Expected a base64-encoded string, got null"},
		{`{"rawo":null}`, []string{"rawo"}, ""},
		{`{"l":null}`, []string{"l"}, "Expected an array, got null"},
		{`{"lo":null}`, []string{"lo"}, ""},
		{`{"lp":null}`, []string{"lp"}, ""},
		{`{"m":null}`, []string{"m"}, "Expected an object, got null"},
		{`{"mo":null}`, []string{"mo"}, ""},
		{`{"sub":null}`, []string{"sub"}, "Expected an object, got null"},
		{`{"subp":null}`, []string{"subp"}, ""},
		{`{"p":null}`, []string{"p"}, ""},
		{`{"any":null}`, []string{"any"}, ""},
		{`{"quoted":null}`, []string{"quoted"}, ""},
		{`{"elems":["x",null]}`, []string{"elems", "1"}, "Expected a string, got null"},
		{`{"pelems":["x",null]}`, []string{"pelems", "1"}, ""},
		{`{"vals":{"a":null}}`, []string{"vals", "a"}, "Expected an integer, got null"},
		{`{"pvals":{"a":null}}`, []string{"pvals", "a"}, ""},
		{`{"subs":[null]}`, []string{"subs", "0"}, "Expected an object, got null"},
		{`{"subp":{"a":null}}`, []string{"subp", "a"}, "Expected a string, got null"},
		{`{"deep":{"k":[true,null]}}`, []string{"deep", "k", "1"}, "Expected a boolean, got null"},
	}
	s := Struct[nullKinds]()
	d := s.d
	schema := s.JSONSchema()
	for _, c := range cases {
		body := []byte(c.body)
		taken := c.want == ""
		if got := schemaTakesNull(schema, c.path); got != taken {
			t.Errorf("%s: the schema takes null: %v, want %v", c.body, got, taken)
		}
		// the one-pass decoder and the strict walk's guard: yes or no
		if _, err := s.dec.pass(body, unsafe.Pointer(new(nullKinds)), nil, false); (err == nil) != taken {
			t.Errorf("%s: the one-pass decoder decides it alone: %v, want %v", c.body, err == nil, taken)
		}
		if got := fitsOnly(d, body); got != taken {
			t.Errorf("%s: fits = %v, want %v", c.body, got, taken)
		}
		// the checks that word the issues: the strict walk listing them over
		// the bytes, the walk of the tree
		var want []Issue
		if !taken {
			want = []Issue{{Path: c.path, Message: c.want}}
		}
		st := newState(false, 0)
		typeIssues(d, body, st)
		if !slices.EqualFunc(st.issues, want, sameIssue) {
			t.Errorf("%s: typeIssues = %v, want %v", c.body, st.issues, want)
		}
		tree, err := DecodeJSON(body)
		if err != nil {
			t.Fatal(err)
		}
		st = newState(false, 0)
		checkType(d, tree, st)
		if !slices.EqualFunc(st.issues, want, sameIssue) {
			t.Errorf("%s: checkType = %v, want %v", c.body, st.issues, want)
		}
		// and the public paths, whole
		for name, issues := range map[string][]Issue{
			"ValidateJSON": s.ValidateJSON(body).Issues,
			"Validate":     s.Validate(tree).Issues,
			"Decode":       decodeIssues(s, body),
		} {
			if !slices.EqualFunc(issues, want, sameIssue) {
				t.Errorf("%s: %s = %v, want %v", c.body, name, issues, want)
			}
		}
	}
}

func decodeIssues(s *StructSchema[nullKinds], body []byte) []Issue {
	_, issues, err := s.Decode(body, 0)
	if err != nil {
		return []Issue{{Message: err.Error()}}
	}
	return issues
}

func sameIssue(a, b Issue) bool {
	return slices.Equal(a.Path, b.Path) && a.Message == b.Message
}

// schemaTakesNull reports whether the request schema at path (through
// properties, items and additionalProperties) lists the "null" type or
// takes any value.
func schemaTakesNull(schema map[string]any, path []string) bool {
	m := schema
	for _, seg := range path {
		switch {
		case m["properties"] != nil:
			m = m["properties"].(map[string]any)[seg].(map[string]any)
		case m["items"] != nil:
			m = m["items"].(map[string]any)
		case m["additionalProperties"] != nil:
			m = m["additionalProperties"].(map[string]any)
		default:
			panic("no schema at " + strings.Join(path, "."))
		}
	}
	switch typ := m["type"].(type) {
	case nil:
		return true
	case []any:
		return slices.Contains(typ, any("null"))
	}
	return false
}
