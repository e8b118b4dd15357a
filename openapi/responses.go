package openapi

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// responses builds the Responses Object of one route from its contract
// (fx.RouteInfo.DeclaredResponses, which states what is listed and what
// is not): each success status with its body's schema, and the error
// responses by status, each listing the codes the operation can produce
// there (an enum over the shared Envelope schema; FX_VALIDATION_ERROR
// alone with the ValidationDetails schema). The ErrorCode schema in
// components lists the whole catalog.
func responses(r fx.RouteInfo) map[string]any {
	out := map[string]any{}
	errs := map[int][]string{}
	for _, d := range r.DeclaredResponses() {
		if d.Code != "" {
			errs[d.Status] = append(errs[d.Status], d.Code)
			continue
		}
		o := map[string]any{"description": cmpOr(d.Description, http.StatusText(d.Status), "Response")}
		var schema map[string]any
		switch {
		case d.Body != nil:
			schema = typeSchema(d.Body)
		case d.BodyType != nil: // a typed operation's Out
			schema = validate.TypeJSONSchema(d.BodyType)
		}
		if schema != nil {
			ct := cmpOr(d.ContentType, "application/json")
			mt := map[string]any{"schema": schema}
			if d.Example != nil {
				mt["example"] = d.Example
			}
			o["content"] = map[string]any{ct: mt}
		}
		out[strconv.Itoa(d.Status)] = o
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
