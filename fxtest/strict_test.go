package fxtest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/openapi"
	"github.com/fxhq/fx/validate"
)

type order struct {
	ID  string `json:"id"`
	Qty int    `json:"qty"`
}

// clerkKey returns an API key and the verifier that accepts it for the
// principal "clerk".
func clerkKey() (string, *middleware.APIKeys) {
	const key = "clerk-key-0123456789abcdef"
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{key: {Subject: "clerk"}})
	if err != nil {
		panic(err)
	}
	return key, keys
}

// ordersApp declares its orders contract; the handlers answer whatever
// the request asks for in ?answer=, declared or not.
func ordersApp() (*fx.App, string) {
	key, keys := clerkKey()
	app := quietApp()
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys}))
	app.Route(fx.Route{
		Method: "POST", Path: "/orders",
		Body:      validate.Object(validate.Fields{"qty": validate.Integer().Min(1)}),
		Responses: []fx.ResponseDoc{{Status: 201, Body: order{}}},
		Errors:    []*fx.Error{fx.NewError(404, "APP_SKU_UNKNOWN", "")},
		Handler: func(c *fx.Ctx) error {
			switch string(c.RequestCtx().QueryArgs().Peek("answer")) {
			case "":
				return c.JSON(201, order{ID: "o1", Qty: 1})
			case "conflict":
				return fx.NewError(409, "APP_CONFLICT", "Order exists")
			case "gone":
				return fx.NewError(404, "APP_GONE", "Gone")
			case "bare404":
				return c.JSON(404, map[string]string{"missing": "sku"})
			case "badbody":
				return c.JSON(201, map[string]any{"id": 7, "qty": "one"})
			}
			return nil // 200, no body
		},
	})
	app.Route(fx.Route{
		Method: "GET", Path: "/orders/:id",
		Responses: []fx.ResponseDoc{{Body: validate.Object(validate.Fields{"id": validate.String()})}},
		Handler: func(c *fx.Ctx) error {
			if c.Param("id") == "bad" {
				return c.JSON(200, map[string]any{"id": 1})
			}
			return c.JSON(200, map[string]any{"id": c.Param("id")})
		},
	})
	app.Route(fx.Route{
		Method: "GET", Path: "/orders/latest",
		Handler: func(c *fx.Ctx) error { return fx.NewError(404, "APP_NONE_YET", "No order yet") },
	})
	app.Route(fx.Route{
		Method: "GET", Path: "/internal", Doc: fx.RouteDoc{Hidden: true},
		Handler: func(c *fx.Ctx) error { return fx.NewError(418, "APP_TEAPOT", "Hidden routes are not in the document") },
	})
	return app, key
}

// TestStrictReportsUndeclaredResponse: a response whose status, or whose
// code at a declared status, the route does not declare fails the test
// with the message naming the answer and the contract; Lenient reports
// nothing; declared responses pass.
func TestStrictReportsUndeclaredResponse(t *testing.T) {
	app, key := ordersApp()
	post := func(c *fxtest.Client, answer string) *fxtest.Response {
		r := c.Post("/orders").Header(middleware.DefaultAPIKeyHeader, key).JSON(`{"qty":1}`)
		if answer != "" {
			r = r.Query("answer", answer)
		}
		return r.Do()
	}
	rec := record(t, func(tb testing.TB) { post(fxtest.New(tb, app), "conflict") })
	want := "POST /orders?answer=conflict answered 409 APP_CONFLICT, which the contract of POST /orders does not declare " +
		"(declared: 201, 401 FX_UNAUTHENTICATED, 404 APP_SKU_UNKNOWN, 413 FX_PAYLOAD_TOO_LARGE, 422 FX_VALIDATION_ERROR, 431 FX_HEADERS_TOO_LARGE, 500 FX_INTERNAL_ERROR)\n" +
		"response: 409 application/json\n" + `{"error":{"code":"APP_CONFLICT","message":"Order exists"}}`
	if !slices.Equal(rec.Errors(), []string{want}) {
		t.Errorf("strict failures:\n%q\nwant\n%q", rec.Errors(), []string{want})
	}

	// The request target is the route's pattern: "its contract".
	app2 := quietApp()
	app2.Route(fx.Route{Method: "DELETE", Path: "/orders", Responses: []fx.ResponseDoc{{Status: 204}},
		Handler: func(c *fx.Ctx) error { return fx.NewError(409, "APP_CONFLICT", "Order exists") }})
	mustFail(t, "its contract", func(tb testing.TB) { fxtest.New(tb, app2).Delete("/orders").Do() },
		"DELETE /orders answered 409 APP_CONFLICT, which its contract does not declare (declared: 204, 431 FX_HEADERS_TOO_LARGE, 500 FX_INTERNAL_ERROR)\n")

	mustFail(t, "undeclared code at a declared status", func(tb testing.TB) { post(fxtest.New(tb, app), "gone") },
		"POST /orders?answer=gone answered 404 APP_GONE, which the contract of POST /orders does not declare (declared: 201, 401")
	mustFail(t, "error status without an envelope", func(tb testing.TB) { post(fxtest.New(tb, app), "bare404") },
		"POST /orders?answer=bare404 answered 404 with a body that the contract of POST /orders does not declare (an error envelope with code APP_SKU_UNKNOWN): the body is not an error envelope")
	mustFail(t, "undeclared success status", func(tb testing.TB) {
		fxtest.New(tb, app).Post("/orders").Header(middleware.DefaultAPIKeyHeader, key).JSON(`{"qty":1}`).Query("answer", "empty").Do()
	}, "answered 200, which the contract of POST /orders does not declare (declared: 201,")

	for _, answer := range []string{"conflict", "gone", "bare404", "badbody"} {
		mustPass(t, "Lenient "+answer, func(tb testing.TB) { post(fxtest.New(tb, app, fxtest.Lenient()), answer) })
	}
	mustPass(t, "declared responses", func(tb testing.TB) {
		c := fxtest.New(tb, app)
		post(c, "").AssertStatus(201)
		c.Post("/orders").Header(middleware.DefaultAPIKeyHeader, key).JSON(`{"qty":0}`).Do().AssertError(422, fx.ErrorCodes.ValidationError)
		c.Post("/orders").JSON(`{"qty":1}`).Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
		c.Get("/orders/7").Header(middleware.DefaultAPIKeyHeader, key).Do().AssertStatus(200)
	})
}

// TestStrictChecksTheBodySchema: a success body that does not fit its
// declared Go type, or its declared validate.Schema, is reported with
// every issue.
func TestStrictChecksTheBodySchema(t *testing.T) {
	app, key := ordersApp()
	mustFail(t, "Go type", func(tb testing.TB) {
		fxtest.New(tb, app).Post("/orders").Header(middleware.DefaultAPIKeyHeader, key).JSON(`{"qty":1}`).Query("answer", "badbody").Do()
	}, "POST /orders?answer=badbody answered 201 with a body that the contract of POST /orders does not declare (fxtest_test.order): id: ", "; qty: ",
		"\nresponse: 201 application/json\n"+`{"id":7,"qty":"one"}`)
	mustFail(t, "validate.Schema", func(tb testing.TB) {
		fxtest.New(tb, app).Get("/orders/bad").Header(middleware.DefaultAPIKeyHeader, key).Do()
	}, "GET /orders/bad answered 200 with a body that the contract of GET /orders/:id does not declare (*validate.ObjectSchema): id: ")
}

// TestStrictLeavesOutWhatIsNotARoutesAnswer: unmatched requests, hidden
// routes and the transport's refusals are not any route's contract;
// HEAD is held to its GET's statuses.
func TestStrictLeavesOutWhatIsNotARoutesAnswer(t *testing.T) {
	app, key := ordersApp()
	mustPass(t, "outside the document", func(tb testing.TB) {
		c := fxtest.New(tb, app)
		c.Get("/nope").Do().AssertError(401, fx.ErrorCodes.Unauthenticated) // app middleware runs before the 404
		c.Get("/nope").Header(middleware.DefaultAPIKeyHeader, key).Do().AssertError(404, fx.ErrorCodes.NotFound)
		c.Put("/orders").Header(middleware.DefaultAPIKeyHeader, key).Do().AssertError(404, fx.ErrorCodes.NotFound)
		c.Get("/internal").Header(middleware.DefaultAPIKeyHeader, key).Do().AssertError(418, "APP_TEAPOT")
		c.Get("/orders/7").Header(middleware.DefaultAPIKeyHeader, key).Header("Content-Length", "x").Do().AssertError(400, fx.ErrorCodes.BadRequest)
		c.Head("/orders/7").Header(middleware.DefaultAPIKeyHeader, key).Do().AssertStatus(200)
	})
	// The static /orders/latest outranks /orders/:id, as in the router:
	// its contract does not declare the 404.
	mustFail(t, "static segment first", func(tb testing.TB) {
		fxtest.New(tb, app).Get("/orders/latest").Header(middleware.DefaultAPIKeyHeader, key).Do()
	}, "GET /orders/latest answered 404 APP_NONE_YET, which its contract does not declare (declared: 200, 401 FX_UNAUTHENTICATED, 431 FX_HEADERS_TOO_LARGE, 500 FX_INTERNAL_ERROR)")
	// A catch-all takes the rest of the path, empty too, but not its own
	// missing slash (the router's 404).
	files := quietApp()
	files.Route(fx.Route{Method: "GET", Path: "/files/*rest", Responses: []fx.ResponseDoc{{}},
		Handler: func(c *fx.Ctx) error { return fx.NewError(409, "APP_LOCKED", "Locked") }})
	mustPass(t, "catch-all without its slash", func(tb testing.TB) {
		fxtest.New(tb, files).Get("/files").Do().AssertError(404, fx.ErrorCodes.NotFound)
	})
	for _, p := range []string{"/files/", "/files/a/b"} {
		mustFail(t, "catch-all "+p, func(tb testing.TB) { fxtest.New(tb, files).Get(p).Do() },
			"GET "+p+" answered 409 APP_LOCKED, which the contract of GET /files/*rest does not declare (declared: 200, 431 FX_HEADERS_TOO_LARGE, 500 FX_INTERNAL_ERROR)")
	}
	mustFail(t, "HEAD", func(tb testing.TB) {
		fxtest.New(tb, app).Head("/orders/latest").Header(middleware.DefaultAPIKeyHeader, key).Do()
	}, "HEAD /orders/latest answered 404, which the contract of GET /orders/latest does not declare (declared: 200, 401 FX_UNAUTHENTICATED, 431 FX_HEADERS_TOO_LARGE, 500 FX_INTERNAL_ERROR)")
}

// TestStrictIsOnWhenTheAppHasADocument: strict mode is on by default for
// an App with a route that documents itself (Doc, Errors, Responses, a
// typed operation, openapi.Mount), off for one whose only declarations
// are its middleware's; Strict and Lenient override.
func TestStrictIsOnWhenTheAppHasADocument(t *testing.T) {
	undeclared := func(c *fx.Ctx) error { return fx.NewError(409, "APP_CONFLICT", "Order exists") }
	key, keys := clerkKey()
	build := func(extra func(app *fx.App)) *fx.App {
		app := quietApp()
		app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys}))
		app.Get("/x", undeclared)
		if extra != nil {
			extra(app)
		}
		return app
	}
	send := func(opts ...fxtest.Option) func(app *fx.App) func(tb testing.TB) {
		return func(app *fx.App) func(tb testing.TB) {
			return func(tb testing.TB) {
				fxtest.New(tb, app, opts...).Get("/x").Header(middleware.DefaultAPIKeyHeader, key).Do()
			}
		}
	}
	type empty struct{}
	documented := map[string]func(app *fx.App){
		"Doc": func(app *fx.App) {
			app.Route(fx.Route{Method: "GET", Path: "/d", Handler: undeclared, Doc: fx.RouteDoc{Summary: "d"}})
		},
		"Group.Doc": func(app *fx.App) { app.Group("/g").Tags("g").Get("/d", undeclared) },
		"Errors": func(app *fx.App) {
			app.Route(fx.Route{Method: "GET", Path: "/d", Handler: undeclared, Errors: []*fx.Error{fx.NewError(409, "APP_CONFLICT", "")}})
		},
		"Responses": func(app *fx.App) {
			app.Route(fx.Route{Method: "GET", Path: "/d", Handler: undeclared, Responses: []fx.ResponseDoc{{}}})
		},
		"Op": func(app *fx.App) {
			fx.Op(app, "GET", "/d", func(c *fx.Ctx, _ *empty) (*empty, error) { return &empty{}, nil })
		},
		"openapi.Mount": func(app *fx.App) { openapi.Mount(app, openapi.Config{}) },
	}
	for name, extra := range documented {
		mustFail(t, name, send()(build(extra)), "GET /x answered 409 APP_CONFLICT, which its contract does not declare (declared: 200, 401 FX_UNAUTHENTICATED, 431 FX_HEADERS_TOO_LARGE, 500 FX_INTERNAL_ERROR)")
		mustPass(t, name+" Lenient", send(fxtest.Lenient())(build(extra)))
	}
	mustPass(t, "no document", send()(build(nil)))
	mustFail(t, "no document, Strict", send(fxtest.Strict())(build(nil)), "GET /x answered 409 APP_CONFLICT")
	mustFail(t, "RequireFullCoverage without strict mode", func(tb testing.TB) {
		fxtest.New(tb, build(nil), fxtest.RequireFullCoverage())
	}, "RequireFullCoverage needs strict mode")
}

// TestCoverage: Coverage lists the declared responses no response
// exercised (not the generic 500 and 413), RequireFullCoverage reports
// them at the end of the test, and TotalCoverage adds up every client.
func TestCoverage(t *testing.T) {
	app, key := ordersApp()
	rec := &kittest.RecordTB{TB: t}
	rec.Run(func(tb testing.TB) {
		c := fxtest.New(tb, app, fxtest.RequireFullCoverage())
		c.Post("/orders").Header(middleware.DefaultAPIKeyHeader, key).JSON(`{"qty":1}`).Do().AssertStatus(201)
		c.Post("/orders").Header(middleware.DefaultAPIKeyHeader, key).JSON(`{"qty":0}`).Do().AssertStatus(422)
		c.Get("/orders/1").Header(middleware.DefaultAPIKeyHeader, key).Do().AssertStatus(200)
		c.Get("/orders/latest").Header(middleware.DefaultAPIKeyHeader, key).Do() // undeclared: reported, not covered
		cov := c.Coverage()
		var missed []string
		for _, o := range cov.Missed {
			missed = append(missed, o.String())
		}
		want := []string{
			"GET /orders/:id 401 FX_UNAUTHENTICATED",
			"GET /orders/latest 200",
			"GET /orders/latest 401 FX_UNAUTHENTICATED",
			"POST /orders 401 FX_UNAUTHENTICATED",
			"POST /orders 404 APP_SKU_UNKNOWN",
		}
		if !slices.Equal(missed, want) || cov.Declared != 8 || cov.Exercised != 3 || cov.Full() {
			t.Errorf("coverage %+v\nmissed %q\nwant %q", cov, missed, want)
		}
		if s := cov.String(); !strings.HasPrefix(s, "fxtest coverage: 3 of 8 declared responses exercised; not exercised:\n\tGET /orders/:id 401 FX_UNAUTHENTICATED\n") {
			t.Errorf("String() = %q", s)
		}
	})
	rec.End() // as when a test function returns: RequireFullCoverage reports
	if len(rec.Errors()) != 2 || !strings.Contains(rec.Errors()[1], "fxtest coverage: 3 of 8 declared responses exercised; not exercised:\n\tGET /orders/:id 401") {
		t.Errorf("RequireFullCoverage at cleanup: %q", rec.Errors())
	}

	// Another client of another App with the same routes adds to the total.
	app2, _ := ordersApp()
	fxtest.New(t, app2).Post("/orders").JSON(`{"qty":1}`).Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
	total := fxtest.TotalCoverage()
	if slices.Contains(total.Missed, fxtest.Outcome{Method: "POST", Path: "/orders", Status: 401, Code: fx.ErrorCodes.Unauthenticated}) ||
		!slices.Contains(total.Missed, fxtest.Outcome{Method: "POST", Path: "/orders", Status: 404, Code: "APP_SKU_UNKNOWN"}) {
		t.Errorf("TotalCoverage: %s", total)
	}
	if got := fxtest.New(t, app2, fxtest.Lenient()).Coverage(); got.Declared != 0 || !got.Full() {
		t.Errorf("Lenient client's coverage: %+v", got)
	}
}

type closedOrder struct {
	_   struct{} `additionalProperties:"false"`
	ID  string   `json:"id"`
	Qty int      `json:"qty"`
}

// TestStrictHoldsUnknownKeys: a body whose type refuses unknown keys is
// documented additionalProperties false, and strict mode fails a
// response that sends a key the type does not have; a type that ignores
// unknown keys (the default, documented without additionalProperties)
// lets the same response pass.
func TestStrictHoldsUnknownKeys(t *testing.T) {
	app := quietApp()
	extra := func(c *fx.Ctx) error { return c.JSON(200, map[string]any{"id": "o1", "qty": 1, "note": "x"}) }
	app.Route(fx.Route{Method: "GET", Path: "/closed", Responses: []fx.ResponseDoc{{Body: closedOrder{}}}, Handler: extra})
	app.Route(fx.Route{Method: "GET", Path: "/open", Responses: []fx.ResponseDoc{{Body: order{}}}, Handler: extra})
	doc, err := openapi.Generate(app, openapi.Config{})
	if err != nil {
		t.Fatal(err)
	}
	schema := func(path string) map[string]any {
		return doc["paths"].(map[string]any)[path].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	}
	if got := schema("/closed")["additionalProperties"]; got != false {
		t.Errorf("closed: additionalProperties %v, want false", got)
	}
	if got, has := schema("/open")["additionalProperties"]; has {
		t.Errorf("open: additionalProperties %v, want none", got)
	}
	mustFail(t, "unknown key", func(tb testing.TB) { fxtest.New(tb, app).Get("/closed").Do() },
		"GET /closed answered 200 with a body that its contract does not declare (fxtest_test.closedOrder): note: Unknown key")
	mustPass(t, "open type", func(tb testing.TB) { fxtest.New(tb, app).Get("/open").Do() })
}

// TestStrictChecksTheDeclaredHeaders: a header the contract declares on
// some response of the route is reported where it is sent undeclared,
// and where it is declared required and missing.
func TestStrictChecksTheDeclaredHeaders(t *testing.T) {
	errNoKey := fx.NewCatalogError(fx.ErrorCodes.Unauthenticated, "no key")
	stamp := fx.Declare(func(c *fx.Ctx, next fx.Next) error {
		if c.Query("stamp") == "early" { // set on its own 401 too, where it declares none
			c.SetHeader("X-Stamp", "1")
			return errNoKey
		}
		if c.Query("stamp") == "none" {
			return errNoKey // without the challenge it declares required
		}
		c.SetHeader("X-Stamp", "1")
		return next()
	}, fx.Declaration{Errors: []*fx.Error{errNoKey}, Headers: []fx.HeaderDoc{
		{Name: "X-Stamp", BeforeNext: true},
		{Name: "WWW-Authenticate", Required: true, Statuses: []int{401}},
	}})
	app := quietApp()
	app.Route(fx.Route{Method: "GET", Path: "/s", Middleware: []fx.Middleware{stamp}, Responses: []fx.ResponseDoc{{Status: 200}},
		Handler: func(c *fx.Ctx) error { return c.NoContent(200) }})
	mustPass(t, "declared", func(tb testing.TB) { fxtest.New(tb, app).Get("/s").Do().AssertStatus(200) })
	mustFail(t, "undeclared header", func(tb testing.TB) { fxtest.New(tb, app).Get("/s?stamp=early").Do() },
		"GET /s?stamp=early answered 401 with the header X-Stamp, which the contract of GET /s does not declare on 401")
	mustFail(t, "required header missing", func(tb testing.TB) { fxtest.New(tb, app).Get("/s?stamp=none").Do() },
		"GET /s?stamp=none answered 401 without the header Www-Authenticate, which the contract of GET /s declares required on 401")
}

// TestStrictChecksTheDeclaredReasons: an error whose details.reason is
// not one its code declares (middleware.FailureReasons) is reported.
func TestStrictChecksTheDeclaredReasons(t *testing.T) {
	sent := fx.NewCatalogError(fx.ErrorCodes.Forbidden, "no", middleware.FailureDetails{Reason: "declared"})
	other := sent.With(middleware.FailureDetails{Reason: "undeclared"})
	guard := fx.Declare(func(c *fx.Ctx, next fx.Next) error {
		if c.Query("other") != "" {
			return other
		}
		return sent
	}, fx.Declaration{Errors: middleware.DeclareFailures(sent)})
	app := quietApp()
	app.Route(fx.Route{Method: "GET", Path: "/g", Middleware: []fx.Middleware{guard}, Responses: []fx.ResponseDoc{{Status: 200}},
		Handler: func(c *fx.Ctx) error { return c.NoContent(200) }})
	mustPass(t, "declared reason", func(tb testing.TB) { fxtest.New(tb, app).Get("/g").Do().AssertError(403, fx.ErrorCodes.Forbidden) })
	mustFail(t, "undeclared reason", func(tb testing.TB) { fxtest.New(tb, app).Get("/g?other=1").Do() },
		"GET /g?other=1 answered 403 FX_FORBIDDEN with details that the contract of GET /g does not declare: reason: Expected one of declared, got undeclared")
}
