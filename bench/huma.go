package bench

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/danielgtaylor/huma/v2/validation"
	"github.com/go-chi/chi/v5"
)

// NewHuma is the service in Huma v2 on its chi adapter (humachi).
//
// Why chi: Huma brings no router of its own; its documentation builds
// every example and its tutorial on humachi, and its benchmarks page
// measures Huma v2 on chi against raw chi (BenchmarkHumaV2Chi vs
// BenchmarkRawChi). No Huma document claims another adapter is faster:
// humago is offered as the dependency-free alternative and humafiber as
// the way into an existing Fiber app. On chi, Huma's own cost also reads
// directly against the chi peer in the tables.
//
// Operations are registered with huma.Get and huma.Register and typed
// input and output structs; POST /orders is validated by Huma from the
// JSON Schema of Order's tags (minLength, minimum, format), before the
// handler runs. Errors use the envelope through the documented override of
// huma.NewError (humaNewError, installed in init), instead of Huma's RFC
// 9457 problem+json model. A Huma middleware (api.UseMiddleware) answers
// panics, and the pass-through chain is Huma middleware too; chi answers
// unmatched routes (Huma never sees them) with the same handler as the chi
// implementation. The config is DefaultConfig without what a benchmark
// service does not serve: the OpenAPI, docs and schema routes, and the
// schema link transformer (which would add a "$schema" field and a Link
// header to every response body).
func NewHuma(middleware int) Impl {
	r := chi.NewMux()
	r.NotFound(stdNotFound)
	r.MethodNotAllowed(stdNotFound)
	api := humachi.New(r, humaConfig())
	api.UseMiddleware(humaRecover(api))
	for range middleware {
		api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) { next(ctx) })
	}
	huma.Get(api, "/hello", func(context.Context, *struct{}) (*humaBody[Hello], error) {
		return &humaBody[Hello]{Body: Hello{Message: HelloMessage}}, nil
	})
	huma.Get(api, "/users/{id}", func(_ context.Context, in *struct {
		ID string `path:"id"`
	}) (*humaBody[User], error) {
		if in.ID == MissingUserID {
			return nil, ErrUserNotFound
		}
		return &humaBody[User]{Body: NewUser(in.ID)}, nil
	})
	huma.Get(api, "/error", func(context.Context, *struct{}) (*humaBody[User], error) {
		return nil, ErrUserNotFound
	})
	huma.Get(api, "/panic", func(context.Context, *struct{}) (*struct{}, error) {
		panic(ErrBoom)
	})
	huma.Register(api, huma.Operation{OperationID: "create-order", Method: http.MethodPost, Path: "/orders", DefaultStatus: 201},
		func(_ context.Context, in *humaBody[Order]) (*humaBody[Order], error) {
			return in, nil
		})
	return Impl{HTTP: r}
}

// humaConfig is DefaultConfig without the OpenAPI, docs and schema
// routes and without the schema link transformer (see NewHuma).
func humaConfig() huma.Config {
	config := huma.DefaultConfig("bench", "1.0.0")
	config.OpenAPIPath, config.DocsPath, config.SchemasPath = "", "", ""
	config.CreateHooks = nil
	return config
}

// humaBody is a Huma input or output whose body is a T.
type humaBody[T any] struct {
	Body T
}

// humaRecover answers a panic in an operation with the production 500
// envelope, through huma.WriteErr and so through humaNewError. Huma has no
// recover of its own: without this the panic reaches net/http's server,
// which logs it and closes the connection with no response.
func humaRecover(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		defer func() {
			if rec := recover(); rec != nil {
				if rec == http.ErrAbortHandler {
					panic(rec)
				}
				_ = huma.WriteErr(api, ctx, 500, InternalMessage)
			}
		}()
		next(ctx)
	}
}

// init installs humaNewError. huma.NewError is a package variable that
// Huma documents as the way to replace its error model ("Custom Errors" in
// its response-errors guide); it is global to the process, which is
// acceptable here because NewHuma is the only Huma API in it.
func init() {
	huma.NewError = humaNewError
}

// humaNewError builds every error Huma writes. Huma calls it for an error
// an operation returns that is not a huma.StatusError (status 500, the
// error among errs), for request validation (422 with one
// *huma.ErrorDetail per failed rule, or 400 for a body that is not JSON),
// and for humaRecover's 500. An *AppError among errs answers its own
// status and envelope; a 400 or 422 with error details is the 422
// FX_VALIDATION_ERROR with one issue per field (fx answers a body that is
// not JSON with 422 too); anything else is the production 500, as
// ToEnvelope makes it for every peer.
func humaNewError(status int, _ string, errs ...error) huma.StatusError {
	for _, err := range errs {
		var ae *AppError
		if errors.As(err, &ae) {
			return newHumaError(ToEnvelope(ae))
		}
	}
	if status == 400 || status == 422 {
		if issues := humaIssues(errs); issues != nil {
			return newHumaError(ToEnvelope(NewValidationError(issues)))
		}
	}
	return newHumaError(500, InternalEnvelope)
}

// humaError is the huma.StatusError of the service: Huma marshals the
// value itself as the response body, so its only JSON field is the
// envelope's "error" member.
type humaError struct {
	status int
	Body   EnvelopeBody `json:"error"`
}

func newHumaError(status int, env Envelope) *humaError {
	return &humaError{status: status, Body: env.Error}
}

// GetStatus implements huma.StatusError.
func (e *humaError) GetStatus() int { return e.status }

// Error implements error.
func (e *humaError) Error() string { return e.Body.Code + ": " + e.Body.Message }

// humaIssues turns Huma's error details into issues with the messages of
// CheckOrder, one per location (the first, as validator/v10 reports one
// failed tag per field: an empty email fails minLength and then format),
// sorted by path as fx sorts them. It returns nil when errs holds no
// details.
func humaIssues(errs []error) []Issue {
	var issues []Issue
	for _, err := range errs {
		d, ok := err.(huma.ErrorDetailer)
		if !ok {
			continue
		}
		is := humaIssue(d.ErrorDetail())
		if !slices.ContainsFunc(issues, func(o Issue) bool {
			return o.Location == is.Location && slices.Equal(o.Path, is.Path)
		}) {
			issues = append(issues, is)
		}
	}
	slices.SortStableFunc(issues, func(a, b Issue) int { return slices.Compare(a.Path, b.Path) })
	return issues
}

// humaIssue maps one detail. Huma's location "body.email" is location
// "body", path ["email"] ("body.lines[0].sku": ["lines", "0", "sku"]);
// "body" alone (a body that is not JSON) has an
// empty path. A detail carries only Huma's formatted message, no rule
// name, so the rule is recognised by the fixed text of its message
// template (huma's validation package; its templates are variables, read
// here at each call, so a localised template still matches). Messages of
// rules Order does not use are kept in Huma's words.
func humaIssue(d *huma.ErrorDetail) Issue {
	where, rest, _ := strings.Cut(d.Location, ".")
	path := splitFieldPath(rest)
	msg := d.Message
	if name, ok := templateArg(msg, validation.MsgExpectedRequiredProperty); ok {
		// Huma reports a missing property at its parent object; fx
		// names the property itself.
		return Issue{Location: where, Path: append(path, name), Message: MsgRequired}
	}
	if bound, ok := templateArg(msg, validation.MsgExpectedMinLength); ok {
		msg = MsgRequired // minLength:"1" is how Order's schema says "not empty"
		if bound != "1" {
			msg = "Must be at least " + bound
		}
	} else if bound, ok := templateArg(msg, validation.MsgExpectedMinimumNumber); ok {
		msg = "Must be at least " + bound
	} else if bound, ok := templateArg(msg, validation.MsgExpectedMaximumNumber); ok {
		msg = "Must be at most " + bound
	} else if _, ok := templateArg(msg, validation.MsgExpectedRFC5322Email); ok {
		msg = MsgEmail
	}
	return Issue{Location: where, Path: path, Message: msg}
}

// templateArg reports whether msg is tmpl with its one verb (%v, %d, %s)
// filled in, and returns what filled it. A template without a verb
// matches itself exactly.
func templateArg(msg, tmpl string) (string, bool) {
	i := strings.IndexByte(tmpl, '%')
	if i < 0 || i+2 > len(tmpl) {
		return "", msg == tmpl
	}
	prefix, suffix := tmpl[:i], tmpl[i+2:]
	if len(msg) < len(prefix)+len(suffix) || !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, suffix) {
		return "", false
	}
	return msg[len(prefix) : len(msg)-len(suffix)], true
}
