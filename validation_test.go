package fx_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate"
	"github.com/fxhq/fx/validate/validatetest"
	"github.com/valyala/fasthttp"
)

// Bounded error work: no request makes an error response larger than
// about 64 KiB, nor costs more than a bounded amount of work. The attack: one 4 MiB POST of
// {"customer":"","items":[{},{},...]} (1.4 million empty items) to the
// order contract of examples/validation produced a 205 MB 422, 9.8 s of
// CPU and 1.3 GB of RSS; 330,000 unknown keys under Strict a 20 MB one.

// boundedOrder is the contract of examples/validation's POST /orders.
var boundedOrder = validatetest.HugeSchema()

var boundedNotify = validate.Query(validate.Fields{"notify": validate.Boolean().Default(false)})

type boundedItem struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

type boundedOrderT struct {
	Customer string        `json:"customer"`
	Items    []boundedItem `json:"items"`
}

// hugeItemsBody is the attack body of size bytes (4 MiB, the body
// limit, in the benchmarks and under FX_SLOW_TESTS; see attackSize).
func hugeItemsBody(size int) []byte { return validatetest.HugeBody("customer", "{}", size) }

// attackSize is the size of the bounded-memory tests' hostile bodies:
// fx.DefaultBodyLimit (4 MiB) with FX_SLOW_TESTS=1 (.ci/run sets it), a
// quarter of it otherwise, so that `go test ./...` stays quick. Their
// bounds are stated per byte of body, so both sizes test one claim.
func attackSize() int {
	if os.Getenv("FX_SLOW_TESTS") == "" {
		return fx.DefaultBodyLimit / 4
	}
	return fx.DefaultBodyLimit
}

// mistypedBody is size bytes of numbers where the items (objects)
// belong: the body go-json decodes in full before reporting its first
// type error.
func mistypedBody(size int) []byte {
	b := bytes.Repeat([]byte(`1,`), (size-32)/2)
	return append(append([]byte(`{"customer":"x","items":[`), b[:len(b)-1]...), `]}`...)
}

// unknownKeysBody is a valid order plus n unknown keys.
func unknownKeysBody(n int) []byte {
	return validatetest.ManyKeysBody(`"customer":"x","items":[{"sku":"A-1","qty":1}]`, n)
}

func boundedApp(cfg ...fx.Config) fasthttp.RequestHandler {
	return boundedRoutes(cfg...).Handler()
}

// boundedRoutes is the App of boundedApp: the bounded order as a route
// contract (/orders, with the bounded query), as validate.Struct (/typed)
// and read by fx.JSONBody in the handler (/jsonbody).
func boundedRoutes(cfg ...fx.Config) *fx.App {
	app := quiet(cfg...)
	app.Route(fx.Route{Method: "POST", Path: "/orders", Body: boundedOrder, Query: boundedNotify,
		Handler: func(c *fx.Ctx) error { return c.JSON(201, "ok") }})
	app.Route(fx.Route{Method: "POST", Path: "/typed", Body: validate.Struct[boundedOrderT](),
		Handler: func(c *fx.Ctx) error { return c.JSON(201, "ok") }})
	app.Post("/jsonbody", func(c *fx.Ctx) error {
		if _, err := fx.JSONBody[boundedOrderT](c); err != nil {
			return err
		}
		return c.JSON(201, "ok")
	})
	return app
}

// boundedServe runs one request through h and returns the status, the body
// and the bytes allocated while serving it (TotalAlloc delta, not timed).
func boundedServe(h fasthttp.RequestHandler, uri string, body []byte) (int, []byte, uint64) {
	rc := kittest.RequestCtx("POST", uri)
	rc.Request.Header.SetContentType("application/json")
	rc.Request.SetBody(body)
	alloc := validatetest.Allocated(func() { h(rc) })
	return rc.Response.StatusCode(), bytes.Clone(rc.Response.Body()), alloc
}

type boundedDetails struct {
	Issues    []contractIssue `json:"issues"`
	Truncated bool            `json:"truncated"`
}

func boundedEnvelope(t *testing.T, status int, body []byte) boundedDetails {
	t.Helper()
	if status != 422 {
		t.Fatalf("status %d: %.300s", status, body)
	}
	var d boundedDetails
	env := checkEnvelopeBody(t, body, fx.ErrorCodes.ValidationError)
	if err := json.Unmarshal(env.Details, &d); err != nil {
		t.Fatalf("details (%v): %.300s", err, body)
	}
	return d
}

// TestHugeInvalidBodyBounded is the regression test of the attack: every
// path answers under 64 KiB, with MaxIssues issues and truncated: true,
// allocating under 10 MB (it was 1.3 GB).
func TestHugeInvalidBodyBounded(t *testing.T) {
	h := boundedApp()
	// 10 MiB for the 4 MiB body: 2.5 bytes allocated per byte of body,
	// most of it the grammar check's key set
	size := attackSize()
	maxAlloc := uint64(size) * 5 / 2
	for _, c := range []struct {
		name, uri string
		body      []byte
		maxAlloc  uint64
	}{
		{"builder", "/orders?notify=maybe", hugeItemsBody(size), maxAlloc},
		{"builder strict unknown keys", "/orders", unknownKeysBody(330_000 * size / fx.DefaultBodyLimit), maxAlloc},
		{"struct", "/typed", mistypedBody(size), maxAlloc},
		{"JSONBody", "/jsonbody", mistypedBody(size), maxAlloc},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.body) > fx.DefaultBodyLimit {
				t.Fatalf("body %d bytes is over the limit", len(c.body))
			}
			status, body, alloc := boundedServe(h, c.uri, c.body)
			d := boundedEnvelope(t, status, body)
			if len(body) > 64<<10 {
				t.Errorf("response is %d bytes, want under 64 KiB", len(body))
			}
			if len(d.Issues) != fx.DefaultMaxIssues || !d.Truncated {
				t.Errorf("%d issues, truncated=%v; want %d, true", len(d.Issues), d.Truncated, fx.DefaultMaxIssues)
			}
			if alloc > c.maxAlloc {
				t.Errorf("serving it allocated %d bytes, want under %d", alloc, c.maxAlloc)
			}
		})
	}
}

// BenchmarkHugeInvalidBody: the 4 MiB attack body through the booted
// handler (`go test -run x -bench BenchmarkHugeInvalidBody -benchmem .`).
func BenchmarkHugeInvalidBody(b *testing.B) {
	h := boundedApp()
	for _, c := range []struct {
		name, uri string
		body      func() []byte
	}{
		{"builder", "/orders?notify=maybe", func() []byte { return hugeItemsBody(fx.DefaultBodyLimit) }},
		{"strict-330k-keys", "/orders", func() []byte { return unknownKeysBody(330_000) }},
		{"struct", "/typed", func() []byte { return mistypedBody(fx.DefaultBodyLimit) }},
		{"JSONBody", "/jsonbody", func() []byte { return mistypedBody(fx.DefaultBodyLimit) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			rc := kittest.RequestCtx("POST", c.uri)
			rc.Request.Header.SetContentType("application/json")
			rc.Request.SetBody(c.body())
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				rc.Response.Reset()
				h(rc)
				if rc.Response.StatusCode() != 422 {
					b.Fatal(rc.Response.StatusCode())
				}
			}
			// CPU time of the process (GC workers included) per request: on a
			// shared machine ns/op is wall time and includes waiting.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// echoingSchema is a foreign schema whose issues echo the input: a huge key as a
// path segment, a deep path, a long message, and many of them.
type echoingSchema struct{ n int }

func (s echoingSchema) Validate(v any) validate.Result {
	m, _ := v.(map[string]any)
	var issues []validate.Issue
	for k := range m {
		deep := make([]string, 1000)
		for i := range deep {
			deep[i] = k
		}
		for range s.n {
			issues = append(issues, validate.Issue{Path: deep, Message: "Bad key " + k})
		}
	}
	return validate.Result{Issues: issues}
}

// TestIssueSizeBounded: however large the issues a schema returns (a 900 KB
// key, 300 KB without FX_SLOW_TESTS, echoed in a 1000-segment path and in
// the message), the 422 stays under 64 KiB and says it is truncated.
func TestIssueSizeBounded(t *testing.T) {
	reps := 300_000
	if os.Getenv("FX_SLOW_TESTS") == "" {
		reps = 100_000
	}
	key := strings.Repeat("\x01é", reps)
	body, _ := json.Marshal(map[string]any{key: 1})
	for _, s := range []validate.Schema{echoingSchema{n: 1}, echoingSchema{n: 50}, boundedOrder} {
		app := quiet(fx.Config{MaxIssues: 1000})
		app.Route(fx.Route{Method: "POST", Path: "/", Body: s, Handler: func(c *fx.Ctx) error { return nil }})
		status, out, _ := boundedServe(app.Handler(), "/", body)
		d := boundedEnvelope(t, status, out)
		if len(out) > 64<<10 {
			t.Errorf("%T: response is %d bytes", s, len(out))
		}
		if len(d.Issues) == 0 {
			t.Fatalf("%T: no issues", s)
		}
		for _, is := range d.Issues {
			if len(is.Path) > 32 || len(is.Message) > 600 || len(is.Path[0]) > 200 {
				t.Fatalf("%T: issue not bounded: %d segments, message %d bytes, segment %d bytes",
					s, len(is.Path), len(is.Message), len(is.Path[0]))
			}
		}
		if _, many := s.(echoingSchema); many && s.(echoingSchema).n == 50 && !d.Truncated {
			t.Errorf("50 issues of ~20 KiB each listed without truncated")
		}
	}
	// NewValidationError bounds what an application builds itself
	e := fx.NewValidationError([]fx.ValidationIssue{{Location: "body", Path: []string{key}, Message: key}})
	b, _ := json.Marshal(e.Details)
	if len(b) > 2<<10 {
		t.Errorf("NewValidationError details are %d bytes", len(b))
	}
}

// countingIssuesSchema counts its calls and reports n issues.
type countingIssuesSchema struct {
	calls *int
	n     int
}

func (s countingIssuesSchema) Validate(any) validate.Result {
	*s.calls++
	var r validate.Result
	for i := range s.n {
		r.Issues = append(r.Issues, validate.Issue{Path: []string{fmt.Sprint(i)}, Message: "Bad"})
	}
	return r
}

// TestBodyAndQueryShareTheCap: the body's and the query's issues count
// against one MaxIssues; a query is not validated once the body filled the
// list; exactly MaxIssues issues is not truncated.
func TestBodyAndQueryShareTheCap(t *testing.T) {
	cases := []struct {
		body, query, want  int
		truncated, queried bool
	}{
		{body: 2, query: 2, want: 3, truncated: true, queried: true},
		{body: 5, query: 2, want: 3, truncated: true, queried: false},
		{body: 1, query: 2, want: 3, truncated: false, queried: true},
		{body: 3, query: 0, want: 3, truncated: false, queried: true},
		{body: 3, query: 1, want: 3, truncated: true, queried: true},
	}
	for _, c := range cases {
		var calls int
		app := quiet(fx.Config{MaxIssues: 3})
		app.Route(fx.Route{Method: "POST", Path: "/", Body: countingIssuesSchema{new(int), c.body}, Query: countingIssuesSchema{&calls, c.query},
			Handler: func(c *fx.Ctx) error { return nil }})
		status, out, _ := boundedServe(app.Handler(), "/", []byte(`{}`))
		d := boundedEnvelope(t, status, out)
		if len(d.Issues) != c.want || d.Truncated != c.truncated || (calls == 1) != c.queried {
			t.Errorf("%+v: %d issues, truncated=%v, query validated %d times", c, len(d.Issues), d.Truncated, calls)
		}
		if !c.truncated && bytes.Contains(out, []byte("truncated")) {
			t.Errorf("%+v: truncated key present: %s", c, out)
		}
	}
	// the query alone is capped too
	app := quiet(fx.Config{MaxIssues: 2})
	app.Route(fx.Route{Method: "GET", Path: "/", Query: validate.Query(validate.Fields{
		"a": validate.Integer(), "b": validate.Integer(), "c": validate.Integer()}),
		Handler: func(c *fx.Ctx) error { return nil }})
	status, out := contractDo(t, app, "GET", "/?a=x&b=y&c=z", "", "")
	if d := boundedEnvelope(t, status, []byte(out)); len(d.Issues) != 2 || !d.Truncated {
		t.Errorf("query: %s", out)
	}
}

// TestJSONBodySameMessagesAsContract: JSONBody and a route contract with
// validate.Struct give the same issues for the same bad body.
func TestJSONBodySameMessagesAsContract(t *testing.T) {
	app := boundedRoutes()
	bodies := []string{
		"", "  \n", "{", `{"customer":"x"} 1`, `{"a":1,"a":2}`, "\"\xff\"", `nul`,
		`"a string"`, `[1]`, `12`, `true`,
		`{"customer":5}`,
		`{"customer":[],"items":{}}`,
		`{"customer":"x","items":[{"sku":1,"qty":"2"},{"qty":1.5},3,null,{"sku":"A","qty":1e300}]}`,
		`{"items":[{"qty":99999999999999999999}]}`,
	}
	for _, b := range bodies {
		for _, ctype := range []string{"application/json", "text/plain"} {
			s1, r1 := contractDo(t, app, "POST", "/typed", ctype, b)
			s2, r2 := contractDo(t, app, "POST", "/jsonbody", ctype, b)
			if s1 != 422 || s2 != 422 {
				t.Errorf("%q %s: statuses %d and %d, want 422", b, ctype, s1, s2)
				continue
			}
			if r1 != r2 {
				t.Errorf("%q %s: different issues\n contract %s\n JSONBody %s", b, ctype, r1, r2)
			}
		}
	}
}

// jsonBodyApps are two apps whose one route differs only by a call to
// JSONBody[boundedOrderT]: the difference of their allocations is
// JSONBody's.
func jsonBodyApps() (with, without fasthttp.RequestHandler) {
	a := fx.New()
	a.Post("/", func(c *fx.Ctx) error {
		if _, err := fx.JSONBody[boundedOrderT](c); err != nil {
			return err
		}
		return c.NoContent(204)
	})
	b := fx.New()
	b.Post("/", func(c *fx.Ctx) error { return c.NoContent(204) })
	return a.Handler(), b.Handler()
}

// sampleOrder is a valid body for boundedOrderT: JSONBody allocates the
// T, one buffer for its strings and the items slice.
const sampleOrder = `{"customer":"ada","items":[{"sku":"A-1","qty":2}]}`

// TestJSONBodyAllocations: JSONBody decodes the sample order with three
// allocations (the T, its strings, its one slice): the schema of the type
// is built once, not per request.
func TestJSONBodyAllocations(t *testing.T) {
	with, without := jsonBodyApps()
	serve := func(h fasthttp.RequestHandler) float64 {
		var rc fasthttp.RequestCtx
		return testing.AllocsPerRun(200, func() {
			rc.Request.Reset()
			rc.Response.Reset()
			rc.Request.Header.SetMethod("POST")
			rc.Request.SetRequestURI("/")
			rc.Request.Header.SetContentType("application/json")
			rc.Request.SetBodyString(sampleOrder)
			h(&rc)
			if rc.Response.StatusCode() != 204 {
				t.Fatalf("status %d: %s", rc.Response.StatusCode(), rc.Response.Body())
			}
		})
	}
	if got := serve(with) - serve(without); got != 3 {
		t.Errorf("JSONBody: %v allocations on the sample order, want 3", got)
	}
}

// BenchmarkJSONBody: a handler decoding the sample order with JSONBody
// and answering 204, against the same handler without JSONBody (the
// difference is JSONBody's cost).
func BenchmarkJSONBody(b *testing.B) {
	with, without := jsonBodyApps()
	b.Run("jsonbody", func(b *testing.B) { kittest.BenchPost(b, with, "/", sampleOrder, 204) })
	b.Run("none", func(b *testing.B) { kittest.BenchPost(b, without, "/", sampleOrder, 204) })
}

type unknownLine struct {
	SKU string `json:"sku"`
}

type unknownOpen struct {
	Customer string        `json:"customer"`
	Lines    []unknownLine `json:"lines"`
}

type unknownClosed struct {
	_        struct{}      `additionalProperties:"false"`
	Customer string        `json:"customer"`
	Lines    []unknownLine `json:"lines"`
}

// TestUnknownKeysOnePolicy: a body key naming no field is ignored by
// fx.Op, JSONBody, a Struct contract and a builder Object alike; a
// struct with `_ struct{} additionalProperties:"false"` and a Strict
// Object refuse it alike, with the one issue "Unknown key" at its path.
// Nested objects are open unless their own type (or schema) is closed.
func TestUnknownKeysOnePolicy(t *testing.T) {
	line := validate.Object(validate.Fields{"sku": validate.String()})
	fields := validate.Fields{"customer": validate.String(), "lines": validate.Array(line).Optional()}
	app := fx.New()
	created := func(c *fx.Ctx) error { return c.NoContent(201) }
	fx.Op(app, "POST", "/op/open", func(c *fx.Ctx, in *struct{ Body unknownOpen }) (*struct{}, error) { return &struct{}{}, nil })
	fx.Op(app, "POST", "/op/closed", func(c *fx.Ctx, in *struct{ Body unknownClosed }) (*struct{}, error) { return &struct{}{}, nil })
	app.Post("/jsonbody/open", jsonBodyCreated[unknownOpen])
	app.Post("/jsonbody/closed", jsonBodyCreated[unknownClosed])
	app.Route(fx.Route{Method: "POST", Path: "/struct/open", Body: validate.Struct[unknownOpen](), Handler: created})
	app.Route(fx.Route{Method: "POST", Path: "/struct/closed", Body: validate.Struct[unknownClosed](), Handler: created})
	app.Route(fx.Route{Method: "POST", Path: "/builder/open", Body: validate.Object(fields), Handler: created})
	app.Route(fx.Route{Method: "POST", Path: "/builder/closed", Body: validate.Object(fields).Strict(), Handler: created})
	const body = `{"customer":"ada","extra":1,"lines":[{"sku":"A","more":2}]}`
	for _, kind := range []string{"op", "jsonbody", "struct", "builder"} {
		status, out := contractDo(t, app, "POST", "/"+kind+"/open", "application/json", body)
		if status != 200 && status != 201 {
			t.Errorf("%s open: %d %s", kind, status, out)
		}
		status, out = contractDo(t, app, "POST", "/"+kind+"/closed", "application/json", body)
		if is := contractIssues(t, status, out); len(is) != 1 || strings.Join(is[0].Path, ".") != "extra" || is[0].Message != "Unknown key" {
			t.Errorf("%s closed: %d %s", kind, status, out)
		}
	}
}

// jsonBodyCreated decodes a T with JSONBody and answers 201.
func jsonBodyCreated[T any](c *fx.Ctx) error {
	if _, err := fx.JSONBody[T](c); err != nil {
		return err
	}
	return c.NoContent(201)
}
