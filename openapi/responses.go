package openapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// Error responses are written so that the client generators keep them
// typed (docs/openapi.md, "Clients"): each error status of an operation
// has a named schema of its own in components.schemas,
// "<OperationId><status>Error" (PostOrders422Error), a plain object with
// no allOf or anyOf: error.code is a string enum of exactly the codes the
// operation declares at that status, error.message a string, and
// error.details the schema of the declared error's Details (the
// ValidationDetails of FX_VALIDATION_ERROR). When the codes of one
// status carry details of different types, error is a oneOf of one named
// schema per type ("<OperationId><status>Error<Code>"), with a
// discriminator on code mapping each code to its schema: ogen decodes it
// into a sum type, oapi-codegen into a union with Discriminator and
// As<Variant> methods, openapi-typescript into a union narrowed by code.

// responses builds the Responses Object of one route from its contract
// (fx.RouteInfo.DeclaredResponses, which states what is listed and what
// is not): each success status with its body's schema and headers, and
// each error status with its schema (see above) and the headers declared
// on it.
func (g *generator) responses(r fx.RouteInfo, opID string) map[string]any {
	out := map[string]any{}
	errs := map[int][]string{}
	headers := map[int][]fx.HeaderDoc{}
	declared := map[string]fx.DeclaredResponse{} // "status code" → its declaration
	var statuses []int
	for _, d := range r.DeclaredResponses() {
		if d.Code != "" {
			declared[strconv.Itoa(d.Status)+" "+d.Code] = d
			if _, seen := errs[d.Status]; !seen {
				statuses = append(statuses, d.Status)
				headers[d.Status] = d.Headers
			}
			errs[d.Status] = append(errs[d.Status], d.Code)
			continue
		}
		o := map[string]any{"description": cmpOr(d.Description, http.StatusText(d.Status), "Response")}
		var schema map[string]any
		switch {
		case d.Body != nil:
			schema = typeSchema(d.Body)
		case d.BodyType != nil: // a typed operation's Out, encoded with nil slices and maps as [] and {}
			schema = validate.OutputJSONSchema(d.BodyType)
		}
		if schema != nil {
			ct := cmpOr(d.ContentType, "application/json")
			mt := map[string]any{"schema": schema}
			if d.Example != nil {
				mt["example"] = d.Example
			}
			o["content"] = map[string]any{ct: mt}
		}
		if h := responseHeaders(d.Headers); h != nil {
			o["headers"] = h
		}
		out[strconv.Itoa(d.Status)] = o
	}
	for _, status := range statuses {
		if status == http.StatusRequestHeaderFieldsTooLarge && slices.Equal(errs[status], []string{fx.ErrorCodes.HeadersTooLarge}) {
			out[strconv.Itoa(status)] = g.headersTooLarge(declared[strconv.Itoa(status)+" "+fx.ErrorCodes.HeadersTooLarge])
			continue
		}
		o := g.errorResponse(opID, status, errs[status], func(code string) fx.DeclaredResponse { return declared[strconv.Itoa(status)+" "+code] })
		if h := responseHeaders(headers[status]); h != nil {
			o["headers"] = h
		}
		out[strconv.Itoa(status)] = o
	}
	return out
}

// responseHeaders is the headers object of one response from its
// declared headers (fx.DeclaredResponse.Headers: the operation's own,
// then those its middleware declare for the status, one per name); nil
// when none.
func responseHeaders(hs []fx.HeaderDoc) map[string]any {
	if len(hs) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, h := range hs {
		schema := h.Schema
		if schema == nil {
			schema = map[string]any{"type": "string"}
		}
		o := map[string]any{"schema": schema}
		if h.Description != "" {
			o["description"] = h.Description
		}
		if h.Required {
			o["required"] = true
		}
		out[h.Name] = o
	}
	return out
}

// headersTooLargeName names the shared response of the connection-layer
// client error, in components.responses, and its schema, in
// components.schemas (with the suffix "Error", as every error schema).
const headersTooLargeName = "HeadersTooLarge"

// headersTooLarge is the reference every operation makes to the one
// shared response 431 FX_HEADERS_TOO_LARGE, registering it (and its
// schema) on first use. The server answers it before routing, to a
// request whose request line and headers are over Config.HeaderLimit,
// whatever the operation: so the response is the same everywhere, with
// no header (no middleware ran), and one entry keeps the document small.
// Its schema is the envelope with error.code the one-value enum, as every
// operation's error schemas are, so that the generators type it.
func (g *generator) headersTooLarge(d fx.DeclaredResponse) map[string]any {
	if g.shared == nil {
		code := fx.ErrorCodes.HeadersTooLarge
		desc := http.StatusText(http.StatusRequestHeaderFieldsTooLarge) + ": " + code +
			". The request line and headers are larger than the server accepts; any operation answers it, before the request reaches it."
		g.schemas[headersTooLargeName+"Error"] = map[string]any{
			"description": "The envelope of " + http.StatusText(http.StatusRequestHeaderFieldsTooLarge) + ": " + code + ".",
			"type":        "object", "required": []any{"error"},
			"properties": map[string]any{"error": errorObject([]string{code}, nil)},
		}
		content := jsonContent(ref(headersTooLargeName + "Error"))
		content["application/json"].(map[string]any)["example"] = errorExample(code, d)
		g.shared = map[string]any{headersTooLargeName: map[string]any{
			"description": desc,
			"content":     content,
		}}
	}
	return map[string]any{"$ref": "#/components/responses/" + headersTooLargeName}
}

// errorResponse is the Response Object of the error codes of one status,
// its schema registered in g.schemas.
// decl gives the declaration of each code (its details and message). The
// response's example is the envelope of its first code (see
// errorExample).
func (g *generator) errorResponse(opID string, status int, codes []string, decl func(code string) fx.DeclaredResponse) map[string]any {
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
	// group the codes by the schema of their details, in code order
	type group struct {
		codes   []string
		details map[string]any // nil: the codes have no declared details
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, c := range codes {
		d := detailsSchema(c, decl(c).Details)
		k := ""
		if d != nil {
			b, _ := json.Marshal(d)
			k = string(b)
		}
		gr := byKey[k]
		if gr == nil {
			gr = &group{details: d}
			byKey[k] = gr
			groups = append(groups, gr)
		}
		gr.codes = append(gr.codes, c)
	}
	name := schemaName(opID) + strconv.Itoa(status) + "Error"
	var errObj map[string]any
	if len(groups) == 1 {
		errObj = errorObject(groups[0].codes, groups[0].details)
	} else {
		variants := make([]any, 0, len(groups))
		mapping := map[string]any{}
		for _, gr := range groups {
			vn := name + schemaName(strings.ToLower(gr.codes[0]))
			g.schemas[vn] = errorObject(gr.codes, gr.details)
			variants = append(variants, ref(vn))
			for _, c := range gr.codes {
				mapping[c] = "#/components/schemas/" + vn
			}
		}
		errObj = map[string]any{
			"oneOf":         variants,
			"discriminator": map[string]any{"propertyName": "code", "mapping": mapping},
		}
	}
	g.schemas[name] = map[string]any{
		"description": "The envelope of " + desc + ".",
		"type":        "object", "required": []any{"error"},
		"properties": map[string]any{"error": errObj},
	}
	content := jsonContent(ref(name))
	content["application/json"].(map[string]any)["example"] = errorExample(codes[0], decl(codes[0]))
	return map[string]any{"description": desc, "content": content}
}

// errorExample is the example envelope of an error response: code, the
// declared message (fx.DeclaredResponse.Message) and an example of its
// declared details: for FX_VALIDATION_ERROR one issue, for a
// validate.Describer (middleware.FailureReasons) a value written from its
// schema (the first of an enum), for another value the value itself, as
// the server encodes it. Written from the declaration, so every operation
// gets one and it fits the response's schema.
func errorExample(code string, d fx.DeclaredResponse) map[string]any {
	e := map[string]any{"code": code, "message": cmpOr(d.Message, http.StatusText(d.Status))}
	switch details := d.Details; {
	case code == fx.ErrorCodes.ValidationError:
		e["details"] = map[string]any{"issues": []any{map[string]any{
			"location": "body", "path": []any{"name"}, "message": "Required"}}}
	case details == nil:
	default:
		if desc, ok := details.(validate.Describer); ok {
			e["details"] = schemaExample(desc.JSONSchema())
			break
		}
		var v any
		if b, err := json.Marshal(details); err == nil && json.Unmarshal(b, &v) == nil {
			e["details"] = v
		}
	}
	return map[string]any{"error": e}
}

// schemaExample is a value of a self-contained schema (no $ref): the
// first of an enum, a constant, an object of its required properties, an
// empty array, the zero of a scalar type.
func schemaExample(s map[string]any) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	t, _ := s["type"].(string)
	if ts, ok := s["type"].([]any); ok && len(ts) > 0 {
		t, _ = ts[0].(string)
	}
	switch t {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, k := range req {
			if p, ok := props[k.(string)].(map[string]any); ok {
				out[k.(string)] = schemaExample(p)
			}
		}
		return out
	case "array":
		return []any{}
	case "string":
		return ""
	case "integer", "number":
		return 0
	case "boolean":
		return false
	}
	return nil
}

// errorObject is the schema of the envelope's error member for codes that
// share one details schema (nil: no details).
func errorObject(codes []string, details map[string]any) map[string]any {
	props := map[string]any{
		"code":    map[string]any{"type": "string", "enum": stringsAny(codes)},
		"message": map[string]any{"type": "string"},
	}
	req := []any{"code", "message"}
	if details != nil {
		props["details"] = details
		req = append(req, "details")
	}
	return map[string]any{"type": "object", "required": req, "properties": props}
}

// detailsSchema is the schema of the details code carries: the
// ValidationDetails of FX_VALIDATION_ERROR, else that of its declared
// details (fx.DeclaredResponse.Details: a validate.Describer such as
// middleware.FailureReasons describes itself, another value by its type);
// nil when none are declared.
func detailsSchema(code string, details any) map[string]any {
	if code == fx.ErrorCodes.ValidationError {
		return ref("ValidationDetails")
	}
	if details == nil {
		return nil
	}
	return typeSchema(details)
}

// schemaName turns an operationId or a code into a component name part:
// letters and digits, each word capitalised ("postOrders" → "PostOrders",
// "fx_validation_error" → "FxValidationError").
func schemaName(s string) string {
	var b strings.Builder
	up := true
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z':
			if up {
				c -= 'a' - 'A'
			}
			b.WriteRune(c)
			up = false
		case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			b.WriteRune(c)
			up = false
		default:
			up = true
		}
	}
	return b.String()
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

// componentSchemas are the shared schemas: the details of
// FX_VALIDATION_ERROR (each operation's error schemas are added as the
// operations are written). Nothing unused is listed: a linter flags an
// unused component.
func componentSchemas() map[string]any {
	return map[string]any{
		"ValidationIssue": map[string]any{
			"type": "object", "required": []any{"location", "path", "message"},
			"properties": map[string]any{
				"location": map[string]any{"type": "string", "enum": []any{"body", "query", "path", "header"}},
				"path":     map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"message":  map[string]any{"type": "string"},
			},
		},
		"ValidationDetails": map[string]any{
			"type": "object", "required": []any{"issues"},
			"properties": map[string]any{
				"issues":    map[string]any{"type": "array", "items": ref("ValidationIssue")},
				"truncated": map[string]any{"type": "boolean", "description": "More issues were found than listed (Config.MaxIssues)."},
			},
		},
	}
}
