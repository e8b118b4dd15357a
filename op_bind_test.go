package fx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// level is a bindable type of its own: encoding.TextUnmarshaler.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return errors.New("not a level")
	}
	return nil
}

type sortOrder string

// bindAll has a field of every bindable type; the query tag binds it in
// fx.Op, the json tag in validate.QueryStruct.
type bindAll struct {
	S    string        `query:"s" json:"s"`
	B    bool          `query:"b" json:"b"`
	I    int           `query:"i" json:"i"`
	I8   int8          `query:"i8" json:"i8"`
	I16  int16         `query:"i16" json:"i16"`
	I32  int32         `query:"i32" json:"i32"`
	I64  int64         `query:"i64" json:"i64"`
	U    uint          `query:"u" json:"u"`
	U8   uint8         `query:"u8" json:"u8"`
	U16  uint16        `query:"u16" json:"u16"`
	U32  uint32        `query:"u32" json:"u32"`
	U64  uint64        `query:"u64" json:"u64"`
	F32  float32       `query:"f32" json:"f32"`
	F64  float64       `query:"f64" json:"f64"`
	T    time.Time     `query:"t" json:"t"`
	D    time.Duration `query:"d" json:"d"`
	Raw  []byte        `query:"raw" json:"raw"`
	L    level         `query:"l" json:"l"`
	O    sortOrder     `query:"o" json:"o" validate:"omitempty,oneof=asc desc"`
	PI   *int          `query:"pi" json:"pi"`
	PS   *string       `query:"ps" json:"ps"`
	Ints []int         `query:"ints" json:"ints"`
	Strs []string      `query:"strs" json:"strs"`
	Bs   []bool        `query:"bs" json:"bs"`
}

// bindBuilder is bindAll's fields the builder can say (it has no Go
// sizes: an integer kind is an Integer within the kind's range).
func bindBuilder() validate.Schema {
	rng := func(lo, hi float64) *validate.NumberSchema { return validate.Integer().Min(lo).Max(hi) }
	in := func(lo, hi float64) validate.Schema { return rng(lo, hi).Optional() }
	return validate.Query(validate.Fields{
		"s": validate.String().Optional(), "b": validate.Boolean().Optional(),
		"i8": in(math.MinInt8, math.MaxInt8), "i16": in(math.MinInt16, math.MaxInt16), "i32": in(math.MinInt32, math.MaxInt32),
		"u8": in(0, math.MaxUint8), "u16": in(0, math.MaxUint16), "u32": in(0, math.MaxUint32),
		"i": in(-1<<53, 1<<53), "i64": in(-1<<53, 1<<53), "u": in(0, 1<<53), "u64": in(0, 1<<53),
		"f64":  validate.Number().Optional(),
		"ints": validate.Array(rng(-1<<53, 1<<53)).Optional(), "strs": validate.Array(validate.String()).Optional(),
		"bs": validate.Array(validate.Boolean()).Optional(),
	})
}

// bindRaws are raw query values (as they stand in a URL) meant to find
// where two readings of a string disagree.
var bindRaws = []string{
	"", "0", "1", "-1", "-0", "+5", "%2B5", "%35", "05", "007", "0.5", ".5", "5.", "1e3", "1E3", "1e+3", "1.5e2", "-1e3",
	"1e16", "-1e16", "9007199254740992", "9007199254740993", "1e400", "-1e400", "1e-400", "0x10", "0x1p-2", "0b1", "1_000",
	"NaN", "nan", "Inf", "-Inf", "%2BInf", "Infinity", "127", "128", "-128", "-129", "255", "256", "65535", "65536",
	"2147483647", "2147483648", "-2147483649", "4294967295", "4294967296", "3.4e38", "3.5e38", "1e39", "-1e39",
	"%205", "5%20", "+", "%00", "%FF", "%C3%A9", "abc", "true", "t", "TRUE", "yes", "on", "2024-01-02T03:04:05Z",
	"2024-01-02T03:04:05%2B01:00", "2024-01-02", "aGk=", "aGk", "!!", "low", "high", "asc", "desc", "ASC",
	"1000000000", "1s",
}

// bindQueries lists the query strings of the differential test for key k:
// every raw value alone, then repeated keys.
func bindQueries(k string) []string {
	var out []string
	for _, v := range bindRaws {
		out = append(out, k+"="+v)
	}
	out = append(out, k, k+"=1&"+k+"=2", k+"=&"+k+"=1", k+"=1&"+k+"=x", k+"=true&"+k+"=0", k+"=a&"+k+"=%FF", k+"=low&"+k+"=x")
	return out
}

// answer is what a route answered, reduced to what must agree.
type answer struct {
	status int
	issues string // location:path:message, sorted as the envelope sorts them
	body   string // the bound value, on success
}

func answerOf(t *testing.T, r result) answer {
	a := answer{status: r.status}
	if r.status == 422 {
		a.issues = strings.Join(opIssues(t, r), "\n")
	} else {
		a.body = string(r.body)
	}
	return a
}

// TestBindingDifferential: a query value means the same to fx.Op, to a
// route whose Query is validate.QueryStruct of the same type, and to the
// builder's validate.Query: same status, same issues (location, path,
// message), and the same bound value. Every bindable type, every raw value
// of bindRaws (signs, leading zeros, exponents, hex floats, NaN and Inf,
// overflow, empty, percent-encoding, non-UTF-8) and repeated keys. The
// path and header fields of fx.Op read a value with the same engine: the
// same issue, at their location. The builder answers for the fields it
// can say (no float32, time, []byte or TextUnmarshaler).
func TestBindingDifferential(t *testing.T) {
	t.Parallel() // CPU only: it overlaps the waits of the parallel tests
	app := fx.New()
	fx.Op(app, "GET", "/op", func(c *fx.Ctx, in *bindAll) (*bindAll, error) { return in, nil })
	app.Route(fx.Route{Method: "GET", Path: "/qs", Query: validate.QueryStruct[bindAll](), Handler: func(c *fx.Ctx) error {
		v, _ := fx.ValidQuery[*bindAll](c)
		// fx.Op sends a nil slice as [] (its output is never null there);
		// c.JSON sends null: give the nil ones the Op's form to compare
		v.Raw, v.Ints, v.Strs, v.Bs = emptyIfNil(v.Raw), emptyIfNil(v.Ints), emptyIfNil(v.Strs), emptyIfNil(v.Bs)
		return c.JSON(200, v)
	}})
	builder := bindBuilder()
	app.Route(fx.Route{Method: "GET", Path: "/builder", Query: builder, Handler: func(c *fx.Ctx) error { return c.NoContent(204) }})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	js, _ := validate.JSONSchemaOf(builder)
	inBuilder := js["properties"].(map[string]any)

	checked := 0
	for _, k := range []string{"s", "b", "i", "i8", "i16", "i32", "i64", "u", "u8", "u16", "u32", "u64", "f32", "f64",
		"t", "d", "raw", "l", "o", "pi", "ps", "ints", "strs", "bs"} {
		for _, q := range bindQueries(k) {
			op := answerOf(t, do(t, app, "GET", "/op?"+q, ""))
			qs := answerOf(t, do(t, app, "GET", "/qs?"+q, ""))
			if op != qs {
				t.Errorf("?%s: fx.Op and QueryStruct disagree:\n op: %+v\n qs: %+v", q, op, qs)
			}
			if op.status != 200 && op.status != 422 { // NaN or Inf in a handler's float: a 500
				t.Errorf("?%s: %d %s", q, op.status, op.body)
			}
			if _, ok := inBuilder[k]; ok {
				b := answerOf(t, do(t, app, "GET", "/builder?"+q, ""))
				if b.status == 204 {
					b.status = 200
				}
				if b.status != op.status || b.issues != op.issues {
					t.Errorf("?%s: fx.Op and the builder disagree:\n op: %d %s\n builder: %d %s", q, op.status, op.issues, b.status, b.issues)
				}
			}
			checked++
		}
	}
	if checked < 24*len(bindRaws) {
		t.Fatalf("checked %d queries", checked)
	}
}

// bindParams has a path, a query and a header field of one type.
type bindParams[T any] struct {
	P T `path:"p"`
	Q T `query:"q"`
	H T `header:"X-H"`
}

// TestBindingEveryLocation: a path, a query and a header field read a
// non-empty value with the one engine: the same value, or the same
// message at each location.
func TestBindingEveryLocation(t *testing.T) {
	testEveryLocation[int8](t, "i8")
	testEveryLocation[uint64](t, "u64")
	testEveryLocation[float32](t, "f32")
	testEveryLocation[bool](t, "b")
	testEveryLocation[time.Time](t, "t")
	testEveryLocation[level](t, "l")
}

func testEveryLocation[T any](t *testing.T, name string) {
	app := quiet()
	fx.Op(app, "GET", "/x/:p", func(c *fx.Ctx, in *bindParams[T]) (*bindParams[T], error) { return in, nil })
	for _, raw := range bindRaws {
		if raw == "" || strings.ContainsAny(raw, "%+") {
			continue // a path or header value is not percent-decoded, nor is + a space there
		}
		r := do(t, app, "GET", "/x/"+raw+"?q="+raw, "", "X-H", raw)
		if r.status == 200 {
			var v map[string]json.RawMessage
			json.Unmarshal(r.body, &v)
			if string(v["P"]) != string(v["Q"]) || string(v["Q"]) != string(v["H"]) {
				t.Errorf("%s %q: %s", name, raw, r.body)
			}
			continue
		}
		got := opIssues(t, r)
		if len(got) != 3 {
			t.Errorf("%s %q: %d: %q", name, raw, r.status, got)
			continue
		}
		msg := strings.SplitN(got[0], ":", 3)[2]
		want := []string{"header:X-H:" + msg, "path:p:" + msg, "query:q:" + msg}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s %q: %q, want %q", name, raw, got, want)
		}
	}
}

// TestOpBootErrors: a field fx.Op cannot bind is a Boot error naming the
// field (collected with the others, never a panic at start-up).
func TestOpBootErrors(t *testing.T) {
	type hidden struct {
		//lint:ignore U1000 the unexported tagged field is the field under test
		n int `query:"n"`
	}
	type inner struct {
		N int `query:"n"`
	}
	for name, c := range map[string]struct {
		reg  func(app *fx.App)
		want string
	}{
		"map": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct {
				M map[string]int `query:"m"`
			}) (*int, error) {
				return nil, nil
			})
		}, "field struct { M map[string]int \"query:\\\"m\\\"\" }.M: cannot bind a map[string]int: a path, query or header field is a string, bool, int"},
		"slice from a header": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct {
				H []string `header:"X-H"`
			}) (*int, error) {
				return nil, nil
			})
		}, ".H: cannot bind a []string from the header"},
		"no such parameter": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct {
				ID string `path:"id"`
			}) (*int, error) {
				return nil, nil
			})
		}, `.ID: path "/x" has no parameter "id"`},
		"unexported": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *hidden) (*int, error) { return nil, nil })
		}, "hidden.n: an unexported field cannot be bound"},
		"rules on an unbound field": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct {
				N int `validate:"min=1"`
			}) (*int, error) {
				return nil, nil
			})
		}, ".N: a validate tag on a field that is not bound"},
		"one name twice": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct {
				inner
				M int `query:"n"`
			}) (*int, error) {
				return nil, nil
			})
		}, `.M: query "n" is bound to N already`},
		"embedded pointer": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct{ *inner }) (*int, error) { return nil, nil })
		}, ".inner: an embedded pointer to a struct with bound fields cannot be bound"},
		"default its rules refuse": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct {
				N int `query:"n" validate:"min=1,max=100" default:"200"`
			}) (*int, error) {
				return nil, nil
			})
		}, `.N: default "200": Must be at most 100`},
		"default of the wrong type": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct {
				N int `header:"X-N" default:"1.5"`
			}) (*int, error) {
				return nil, nil
			})
		}, `.N: default "1.5": Expected an integer, got 1.5`},
		"default on a required field": {func(app *fx.App) {
			fx.Op(app, "GET", "/x", func(c *fx.Ctx, in *struct {
				N int `query:"n,required" default:"1"`
			}) (*int, error) {
				return nil, nil
			})
		}, ".N: a default on a required field"},
	} {
		app := quiet() // each boot fails and would log it
		c.reg(app)
		err := app.Boot()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Boot: %v\nwant it to contain %q", name, err, c.want)
		}
	}
}

// defaultsIn has a default on a query and a header field; the embedded
// struct's fields are bound as its own.
type defaultsIn struct {
	pageIn
	Sort string `query:"sort" validate:"oneof=asc desc" default:"asc"`
	Ver  uint8  `header:"X-Version" default:"2"`
}

type pageIn struct {
	Limit int    `query:"limit" validate:"min=1,max=100" default:"20"`
	ID    string `path:"id"`
	Key   string `header:"X-Key" validate:"omitempty,len=3"`
}

// TestOpDefaultsAndEmbedded: a default applies when the value is absent
// (or empty), the value's rules still apply to a sent value, and the
// fields of an embedded struct bind from every location, appear in
// RouteInfo.Input and carry their default into the schema.
func TestOpDefaultsAndEmbedded(t *testing.T) {
	app := fx.New()
	fx.Op(app, "GET", "/x/:id", func(c *fx.Ctx, in *defaultsIn) (*defaultsIn, error) { return in, nil })
	for _, c := range []struct{ target, key, want string }{
		{"/x/a", "", `200 {"Limit":20,"ID":"a","Key":"","Sort":"asc","Ver":2}`},
		{"/x/a?limit=&sort=", "", `422 query:sort:Must be one of: "asc", "desc"`},
		{"/x/b?limit=7&sort=desc", "abc", `200 {"Limit":7,"ID":"b","Key":"abc","Sort":"desc","Ver":2}`},
		{"/x/b?limit=0", "ab", "422 header:X-Key:Must be exactly 3 characters long\nquery:limit:Must be at least 1"},
	} {
		var r result
		if c.key != "" {
			r = do(t, app, "GET", c.target, "", "X-Key", c.key)
		} else {
			r = do(t, app, "GET", c.target, "")
		}
		got := fmt.Sprint(r.status, " ", string(r.body))
		if r.status == 422 {
			got = fmt.Sprint(r.status, " ", strings.Join(opIssues(t, r), "\n"))
		}
		if got != c.want {
			t.Errorf("%s: %s\nwant %s", c.target, got, c.want)
		}
	}
	routes, err := app.Routes()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range routes[0].Input {
		got = append(got, fmt.Sprint(f.In, ":", f.Name, " default=", f.Schema["default"]))
	}
	want := "query:limit default=20 path:id default=<nil> header:X-Key default=<nil> query:sort default=asc header:X-Version default=2"
	if strings.Join(got, " ") != want {
		t.Errorf("Input %q\nwant %q", strings.Join(got, " "), want)
	}
}

type defaultBody struct {
	Name  string `json:"name"`
	Limit int    `json:"limit" validate:"min=1,max=100" default:"20"`
	Sort  string `json:"sort" validate:"oneof=asc desc" default:"asc"`
}

// TestOpBodyDefaults: a body field's default applies when its key is
// absent, a sent value still meets the field's rules, and the body's
// schema carries the default.
func TestOpBodyDefaults(t *testing.T) {
	app := fx.New()
	fx.Op(app, "POST", "/x", func(c *fx.Ctx, in *struct{ Body defaultBody }) (*defaultBody, error) { return &in.Body, nil })
	for body, want := range map[string]string{
		`{"name":"a"}`:                         `200 {"name":"a","limit":20,"sort":"asc"}`,
		`{"name":"a","limit":5,"sort":"desc"}`: `200 {"name":"a","limit":5,"sort":"desc"}`,
		`{"limit":0}`:                          `422 body:limit:Must be at least 1`,
		`{"name":1}`:                           `422 body:name:Expected a string, got a number`,
		`{"name":"a","limit":500,"sort":"up"}`: "422 body:limit:Must be at most 100\nbody:sort:Must be one of: \"asc\", \"desc\"",
	} {
		r := do(t, app, "POST", "/x", body, "Content-Type", "application/json")
		got := fmt.Sprint(r.status, " ", string(r.body))
		if r.status == 422 {
			got = fmt.Sprint(r.status, " ", strings.Join(opIssues(t, r), "\n"))
		}
		if got != want {
			t.Errorf("%s: %s\nwant %s", body, got, want)
		}
	}
	routes, _ := app.Routes()
	props := routes[0].Input[0].Schema["properties"].(map[string]any)
	if d := fmt.Sprint(props["limit"].(map[string]any)["default"], " ", props["sort"].(map[string]any)["default"]); d != "20 asc" {
		t.Errorf("defaults in the schema: %s (%v)", d, props)
	}
}

// withBody holds an input's Body in an embedded struct, whose own
// embedded struct's fields the body's JSON flattens.
type withBody struct {
	Body struct {
		opItem
		Note string `json:"note"`
	}
}

// TestOpEmbeddedBody: a Body in an embedded struct is the input's body,
// and a body type's embedded struct is flattened as encoding/json does,
// in the binding and in RouteInfo.Input's schema.
func TestOpEmbeddedBody(t *testing.T) {
	app := fx.New()
	fx.Op(app, "POST", "/x", func(c *fx.Ctx, in *struct {
		withBody
		N int `query:"n"`
	}) (*withBody, error) {
		return &in.withBody, nil
	})
	r := do(t, app, "POST", "/x?n=1", `{"sku":"A","qty":2,"note":"n"}`, "Content-Type", "application/json")
	if want := `{"Body":{"sku":"A","qty":2,"note":"n"}}`; r.status != 200 || string(r.body) != want {
		t.Errorf("%d %s, want %s", r.status, r.body, want)
	}
	routes, _ := app.Routes()
	var body fx.InputField
	for _, f := range routes[0].Input {
		if f.In == "body" {
			body = f
		}
	}
	props, _ := body.Schema["properties"].(map[string]any)
	if props["sku"] == nil || props["qty"] == nil || props["note"] == nil {
		t.Errorf("body schema %v", body.Schema)
	}
}

// emptyIfNil is s, or an empty S when s is nil.
func emptyIfNil[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}
