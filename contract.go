package fx

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/fxhq/fx/validate"
)

// contractHandler validates body and query against their schemas (both,
// always), reports every issue of both in one 422, and otherwise stores the
// validated values for ValidBody / ValidQuery before running h.
func contractHandler(bodySchema, querySchema validate.Schema, h Handler) Handler {
	return func(c *Ctx) error {
		var issues []ValidationIssue
		if bodySchema != nil {
			v, bodyIssues, err := c.validateBody(bodySchema)
			if err != nil {
				return err
			}
			issues = append(issues, bodyIssues...)
			c.body = v
		}
		if querySchema != nil {
			res, err := runSchema(querySchema, queryMap(c))
			if err != nil {
				return err
			}
			issues = appendIssues(issues, "query", res.Issues)
			c.query = res.Value
		}
		if len(issues) > 0 {
			sortIssues(issues)
			return NewValidationError(issues)
		}
		return h(c)
	}
}

func (c *Ctx) validateBody(s validate.Schema) (any, []ValidationIssue, error) {
	if err := checkJSONContentType(c); err != nil {
		return nil, err.(*Error).Details.(validationDetails).Issues, nil
	}
	raw := c.rc.Request.Body()
	var v any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := decodeJSON(raw, &v); err != nil {
			return nil, err.(*Error).Details.(validationDetails).Issues, nil
		}
	}
	res, err := runSchema(s, v)
	if err != nil {
		return nil, nil, err
	}
	return res.Value, appendIssues(nil, "body", res.Issues), nil
}

// runSchema calls Validate; a panicking schema is an internal failure (500),
// not a validation failure.
func runSchema(s validate.Schema, v any) (res validate.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fx: schema %T panicked: %v", s, r)
		}
	}()
	return s.Validate(v), nil
}

func appendIssues(dst []ValidationIssue, location string, issues []validate.Issue) []ValidationIssue {
	for _, is := range issues {
		p := is.Path
		if p == nil {
			p = []string{}
		}
		dst = append(dst, ValidationIssue{Location: location, Path: p, Message: is.Message})
	}
	return dst
}

// sortIssues orders issues by location (body before query), then path.
func sortIssues(issues []ValidationIssue) {
	slices.SortStableFunc(issues, func(a, b ValidationIssue) int {
		if a.Location != b.Location {
			if a.Location == "body" {
				return -1
			}
			return 1
		}
		return slices.Compare(a.Path, b.Path)
	})
}

// queryMap builds the value a Query schema receives: string values, or
// []string for a repeated key.
func queryMap(c *Ctx) map[string]any {
	m := map[string]any{}
	for k, v := range c.rc.QueryArgs().All() {
		key, val := string(k), string(v)
		switch prev := m[key].(type) {
		case nil:
			m[key] = val
		case string:
			m[key] = []string{prev, val}
		case []string:
			m[key] = append(prev, val)
		}
	}
	return m
}

// ValidBody returns the body validated by the route contract, as the type
// the schema produced (for the built-in schemas: map[string]any, or T for
// validate.Struct[T]). ok is false when the route has no Body schema or the
// value is of another type. No second decode happens.
func ValidBody[T any](c *Ctx) (v T, ok bool) {
	v, ok = c.body.(T)
	return v, ok
}

// ValidQuery is ValidBody for the query.
func ValidQuery[T any](c *Ctx) (v T, ok bool) {
	v, ok = c.query.(T)
	return v, ok
}
