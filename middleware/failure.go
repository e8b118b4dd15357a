package middleware

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// FailureReasons documents details.reason of the errors of one code that
// a middleware can send: it is the Details of the errors DeclareFailures
// returns, which are declared (fx.Declaration.Errors), never sent. Package
// openapi describes it as an object whose reason is one of these values
// (validate.Describer), and fxtest's strict mode validates the details of
// an answer of that code with it (validate.Schema). When several
// middleware of one route declare the code, their FailureReasons are
// joined (fx.DeclaredResponse.Details).
type FailureReasons []string

// JSONSchema is the schema of the details: {"reason": one of r}.
func (r FailureReasons) JSONSchema() map[string]any {
	enum := make([]any, len(r))
	for i, s := range r {
		enum[i] = s
	}
	return map[string]any{
		"type": "object", "required": []any{"reason"},
		"properties": map[string]any{"reason": map[string]any{"type": "string", "enum": enum}},
	}
}

// Validate accepts details (decoded JSON) whose reason is one of r.
func (r FailureReasons) Validate(details any) validate.Result {
	m, _ := details.(map[string]any)
	reason, ok := m["reason"].(string)
	if ok && slices.Contains(r, reason) {
		return validate.Result{Value: details}
	}
	return validate.Result{Issues: []validate.Issue{{Path: []string{"reason"},
		Message: fmt.Sprintf("Expected one of %s, got %v", strings.Join(r, ", "), m["reason"])}}}
}

// DeclareFailures returns the errors to declare (fx.Declaration.Errors)
// for errs, the errors a middleware sends, each with FailureDetails: one
// per code, in order of first appearance, with that code's status and as
// Details the FailureReasons of every reason errs carry at that code. The
// declaration is so written from the errors sent, never beside them. nil
// entries are skipped.
func DeclareFailures(errs ...*fx.Error) []*fx.Error {
	var out []*fx.Error
	var reasons []FailureReasons
	for _, e := range errs {
		if e == nil {
			continue
		}
		i := slices.IndexFunc(out, func(d *fx.Error) bool { return d.Code == e.Code })
		if i < 0 {
			out = append(out, e)
			reasons = append(reasons, nil)
			i = len(out) - 1
		}
		if fd, ok := e.Details.(FailureDetails); ok && !slices.Contains(reasons[i], fd.Reason) {
			reasons[i] = append(reasons[i], fd.Reason)
		}
	}
	for i, e := range out {
		out[i] = e.With(reasons[i])
	}
	return out
}
