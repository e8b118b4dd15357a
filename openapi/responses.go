package openapi

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// Error responses, by status, each listing the codes the operation can
// produce there (an enum over the shared Envelope schema):
//
//   - 422 FX_VALIDATION_ERROR when a contract validates the body or the
//     query (or a typed operation binds its input), with the
//     ValidationDetails schema (issues, truncated);
//   - 413 FX_PAYLOAD_TOO_LARGE when the operation reads a body (a Body
//     schema, a typed Body, or POST, PUT and PATCH);
//   - 500 FX_INTERNAL_ERROR on every operation;
//   - what the route's middleware declare (fx.Declare: 401
//     FX_UNAUTHENTICATED, 403 FX_FORBIDDEN, 400 FX_TENANT_REQUIRED, 429
//     FX_RATE_LIMITED, 504 FX_TIMEOUT ...) and the application errors of
//     Route.Errors, each at its own status.
//
// Errors that do not belong to an operation are not listed there: 404
// FX_NOT_FOUND (no operation matched), and the transport's 400, 408 and
// 431, which fx answers before routing. The ErrorCode schema in
// components lists the whole catalog.

// errorSet collects codes by status.
type errorSet map[int][]string

func (s errorSet) add(status int, code string) {
	if !slices.Contains(s[status], code) {
		s[status] = append(s[status], code)
	}
}

// responses builds the Responses Object of one route.
func responses(r fx.RouteInfo, in input) map[string]any {
	out := map[string]any{}
	if len(r.Responses) == 0 {
		out["200"] = map[string]any{"description": "OK"}
		if r.Out != nil {
			out["200"] = map[string]any{"description": "OK", "content": jsonContent(validate.TypeJSONSchema(r.Out))}
		}
	}
	for i, resp := range r.Responses {
		status := resp.Status
		if status == 0 {
			status = http.StatusOK
		}
		o := map[string]any{"description": cmpOr(resp.Description, http.StatusText(status), "Response")}
		var schema map[string]any
		switch {
		case resp.Body != nil:
			schema = typeSchema(resp.Body)
		case i == 0 && r.Out != nil: // a typed operation writes Out with the first status
			schema = validate.TypeJSONSchema(r.Out)
		}
		if schema != nil {
			ct := cmpOr(resp.ContentType, "application/json")
			mt := map[string]any{"schema": schema}
			if resp.Example != nil {
				mt["example"] = resp.Example
			}
			o["content"] = map[string]any{ct: mt}
		}
		out[strconv.Itoa(status)] = o
	}

	errs := errorSet{}
	if in.validated {
		errs.add(422, fx.CodeValidationError)
	}
	if in.body != nil || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		errs.add(413, fx.CodePayloadTooLarge)
	}
	errs.add(500, fx.CodeInternalError)
	for _, e := range r.Errors {
		status := e.Status
		if status < 400 || status > 599 {
			status = 500 // as the error boundary sends it
		}
		errs.add(status, e.Code)
	}
	for status, codes := range errs {
		out[strconv.Itoa(status)] = errorResponse(status, codes)
	}
	return out
}

// errorResponse is the Response Object of the error codes of one status.
func errorResponse(status int, codes []string) map[string]any {
	slices.Sort(codes)
	desc := http.StatusText(status)
	if desc == "" {
		desc = "Error"
	}
	for i, c := range codes {
		sep := ": "
		if i > 0 {
			sep = ", "
		}
		desc += sep + c
	}
	errObj := map[string]any{
		"type":       "object",
		"properties": map[string]any{"code": map[string]any{"enum": stringsAny(codes)}},
	}
	if len(codes) == 1 && codes[0] == fx.CodeValidationError {
		errObj["properties"].(map[string]any)["details"] = ref("ValidationDetails")
		errObj["required"] = []any{"details"}
	}
	schema := map[string]any{"allOf": []any{ref("Envelope"), map[string]any{
		"type": "object", "properties": map[string]any{"error": errObj},
	}}}
	o := map[string]any{"description": desc, "content": jsonContent(schema)}
	switch status {
	case 401:
		o["headers"] = map[string]any{"WWW-Authenticate": header("The authentication scheme the route expects.")}
	case 429, 503:
		o["headers"] = map[string]any{"Retry-After": header("Seconds to wait before retrying.")}
	}
	return o
}

func header(desc string) map[string]any {
	return map[string]any{"description": desc, "schema": map[string]any{"type": "string"}}
}

func ref(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

func cmpOr(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// componentSchemas are the shared schemas: the envelope every error uses,
// the details of FX_VALIDATION_ERROR, and the catalog of codes.
func componentSchemas() map[string]any {
	codes := make([]any, 0, len(fx.ErrorStatus))
	for code := range fx.ErrorStatus {
		codes = append(codes, code)
	}
	slices.SortFunc(codes, func(a, b any) int {
		if a.(string) < b.(string) {
			return -1
		}
		return 1
	})
	return map[string]any{
		"Envelope": map[string]any{
			"description": "Every error response: {\"error\":{\"code\",\"message\",\"details\"?}}. Operations narrow error.code to the codes they can produce.",
			"type":        "object", "required": []any{"error"}, "additionalProperties": false,
			"properties": map[string]any{"error": map[string]any{
				"type": "object", "required": []any{"code", "message"}, "additionalProperties": false,
				"properties": map[string]any{
					"code": map[string]any{
						"description": "A stable code: one of ErrorCode, or an application code (never starting with FX_).",
						"anyOf":       []any{ref("ErrorCode"), map[string]any{"type": "string", "not": map[string]any{"pattern": "^FX_"}}},
					},
					"message": map[string]any{"type": "string"},
					"details": map[string]any{"description": "Present only when the error has details (never null or {})."},
				},
			}},
		},
		"ValidationIssue": map[string]any{
			"type": "object", "required": []any{"location", "path", "message"}, "additionalProperties": false,
			"properties": map[string]any{
				"location": map[string]any{"type": "string", "enum": []any{"body", "query", "path", "header"}},
				"path":     map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"message":  map[string]any{"type": "string"},
			},
		},
		"ValidationDetails": map[string]any{
			"type": "object", "required": []any{"issues"}, "additionalProperties": false,
			"properties": map[string]any{
				"issues":    map[string]any{"type": "array", "items": ref("ValidationIssue")},
				"truncated": map[string]any{"type": "boolean", "description": "More issues were found than listed (Config.MaxIssues)."},
			},
		},
		"ErrorCode": map[string]any{
			"description": "Every code the framework emits (fx.ErrorStatus).",
			"type":        "string", "enum": codes,
		},
	}
}
