package playground

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fxhq/fx/internal/jsontree"
	"github.com/fxhq/fx/validate"
	"github.com/go-playground/validator/v10"
)

var (
	defaultOnce sync.Once
	defaultV    *validator.Validate
)

// Default returns the validator used when nil is passed: validator.New
// with WithRequiredStructEnabled, shared.
func Default() *validator.Validate {
	defaultOnce.Do(func() { defaultV = validator.New(validator.WithRequiredStructEnabled()) })
	return defaultV
}

// Schema is a validate.Schema (and validate.Decoder) for a struct type T.
// Its Result.Value is a *T.
type Schema[T any] struct {
	decode *validate.StructSchema[T]
	v      *validator.Validate
}

// Struct returns the body schema of T: the body is decoded into a T by
// validate.Struct[T] (so a type error on any field is reported, all of them
// together) and then checked with v.Struct (nil: Default()). T must be a
// struct type. Cost on a valid body: the go-json decode plus what v.Struct
// costs (it allocates nothing for most tags).
func Struct[T any](v *validator.Validate) *Schema[T] {
	if v == nil {
		v = Default()
	}
	return &Schema[T]{decode: validate.Struct[T](validate.TypesOnly()), v: v}
}

// Query is Struct for a route's query string: the values are coerced as
// validate.QueryStruct does before the tags are checked.
func Query[T any](v *validator.Validate) *Schema[T] {
	if v == nil {
		v = Default()
	}
	return &Schema[T]{decode: validate.QueryStruct[T](validate.TypesOnly()), v: v}
}

// Validate decodes the generic value into a T and checks its tags.
//
// Every issue is reported, as the built-in builder does: the type error of
// each field that does not decode, and the failing tags of every field
// that does (a mistyped field counts as absent for the tags, and the tag
// failures at or below it are not reported: it already has its issue).
func (s *Schema[T]) Validate(value any) validate.Result { return s.ValidateLimit(value, 0) }

// ValidateLimit is Validate with at most max issues (validate.Limited).
// The type check stops at max; when it alone fills the list, no tag is
// checked. validator/v10 has no way to stop early, so on a large value
// the elements of T's dive fields (nested ones too) are first checked one
// at a time, stopping at max; only when they have fewer
// issues is the whole T checked, and only max of validator's errors are
// translated. Measured (BenchmarkHugeInvalidBody): a 4 MiB body of 1.4
// million empty items stops after 51 items (10 ms, 57 KB; before: 3.6 s,
// 1 GB).
func (s *Schema[T]) ValidateLimit(value any, max int) validate.Result {
	if max > 0 && jsontree.MoreNodesThan(value, smallTree*max) {
		if issues := s.bounded(max, treeNode{value}); issues != nil {
			return validate.Result{Issues: issues}
		}
	}
	return s.check(s.decode.ValidateLimit(value, max), func() any { return value }, max)
}

// ValidateJSON is the fast path (validate.Decoder): the bytes are decoded
// straight into a T.
func (s *Schema[T]) ValidateJSON(body []byte) validate.Result { return s.ValidateJSONLimit(body, 0) }

// ValidateJSONLimit is ValidateJSON with at most max issues
// (validate.LimitedDecoder). A body with type errors is decoded into the
// generic tree (to check the tags of the fields that did decode) only when
// the type errors leave room in the list.
func (s *Schema[T]) ValidateJSONLimit(body []byte, max int) validate.Result {
	if len(body) > smallBody*max && s.prepasses(max) {
		// The pre-pass scans bytes of a well-formed body only: it checks
		// the grammar first; otherwise the decoder's pass checks it.
		if err := validate.CheckJSON(body); err != nil {
			return validate.Result{Issues: []validate.Issue{err.(*validate.JSONError).Issue()}}
		}
		if issues := s.bounded(max, bodyNode(body)); issues != nil {
			return validate.Result{Issues: issues}
		}
	}
	return s.check(s.decode.ValidateJSONLimit(body, max), func() any {
		v, _ := validate.DecodeJSON(body) // accepted by CheckJSON already
		return v
	}, max)
}

// ChecksGrammar reports true (validate.GrammarChecker): a malformed body
// is refused by the decode of validate.Struct[T], which checks the
// grammar in its one pass, or, on a body large enough for the bounded
// pre-pass of ValidateJSONLimit, before it, with CheckJSON's one issue;
// fx does not check it again.
func (s *Schema[T]) ChecksGrammar() bool { return true }

func (s *Schema[T]) check(res validate.Result, tree func() any, max int) validate.Result {
	if res.Err() != nil {
		return res
	}
	var typeIssues []validate.Issue
	if len(res.Issues) > 0 {
		if max > 0 && len(res.Issues) >= max {
			return res // the list is full: no tag work
		}
		// The fields that decoded: the value with every mistyped one null
		// (null leaves a field's zero value, and keeps array indices).
		typeIssues = res.Issues
		paths := make([][]string, len(typeIssues))
		for i, is := range typeIssues {
			paths[i] = is.Path
		}
		v := jsontree.NullAt(tree(), paths)
		if v == nil {
			return res
		}
		if res = s.decode.Validate(v); len(res.Issues) > 0 || res.Err() != nil {
			return validate.Result{Issues: typeIssues}
		}
	}
	p := res.Value.(*T)
	err := s.v.Struct(p)
	if err == nil {
		if typeIssues != nil {
			return validate.Result{Issues: typeIssues}
		}
		return res
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return validate.Fail(err) // misuse: InvalidValidationError and the like
	}
	root := reflect.TypeFor[T]()
	out := typeIssues
	for _, fe := range verrs {
		if max > 0 && len(out) >= max {
			break
		}
		is := issue(fe, root)
		if !under(is.Path, typeIssues) {
			out = append(out, is)
		}
	}
	return validate.Result{Issues: out}
}

// under reports whether path is at or below the path of one of issues.
func under(path []string, issues []validate.Issue) bool {
	for _, is := range issues {
		if len(is.Path) <= len(path) && slices.Equal(is.Path, path[:len(is.Path)]) {
			return true
		}
	}
	return false
}

// Issues translates validator's errors for a value of type root into
// issues with JSON paths and messages built from the failing tags. Use it
// when calling validator yourself.
func Issues(errs validator.ValidationErrors, root reflect.Type) []validate.Issue {
	out := make([]validate.Issue, 0, len(errs))
	for _, fe := range errs {
		out = append(out, issue(fe, root))
	}
	return out
}

func issue(fe validator.FieldError, root reflect.Type) validate.Issue {
	ns := fe.StructNamespace()
	msg := Message(fe)
	if other := otherField(root, ns, fe.Tag(), fe.Param()); other != "" {
		msg = strings.TrimSuffix(msg, fe.Param()) + other
	}
	return validate.Issue{Path: jsonPath(root, ns), Message: msg}
}

// otherField returns the JSON name of the field that a field-comparison
// tag (eqfield=Password) names by its Go name, or "" for other tags: in the
// same struct for eqfield and the like, from the top for eqcsfield and the
// like (dotted, "inner.code").
func otherField(root reflect.Type, ns, tag, param string) string {
	var path []string
	switch tag {
	case "eqfield", "nefield", "gtfield", "gtefield", "ltfield", "ltefield":
		i := strings.LastIndexByte(ns, '.')
		if i < 0 {
			return ""
		}
		p := jsonPath(root, ns[:i]+"."+param)
		if len(p) == 0 {
			return ""
		}
		path = p[len(p)-1:]
	case "eqcsfield", "necsfield", "gtcsfield", "gtecsfield", "ltcsfield", "ltecsfield":
		path = jsonPath(root, "_."+param)
	default:
		return ""
	}
	return strings.Join(path, ".")
}

// jsonPath turns "Order.Items[1].Qty" into ["items","1","qty"], reading
// the json tags of root; map keys ("Labels[a.b]") stay one segment.
func jsonPath(root reflect.Type, ns string) []string {
	path := []string{}
	t := deref(root)
	// drop the root type's name
	if i := strings.IndexAny(ns, ".["); i >= 0 {
		ns = ns[i:]
	} else {
		return path
	}
	for len(ns) > 0 {
		switch ns[0] {
		case '.':
			ns = ns[1:]
			end := strings.IndexAny(ns, ".[")
			if end < 0 {
				end = len(ns)
			}
			name := ns[:end]
			ns = ns[end:]
			jsonName, ft, flattened := fieldJSON(t, name)
			if !flattened {
				path = append(path, jsonName)
			}
			t = deref(ft)
		case '[':
			end := closeBracket(ns)
			path = append(path, ns[1:end])
			ns = ns[end+1:]
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
				t = deref(t.Elem())
			}
		default:
			return append(path, ns)
		}
	}
	return path
}

// closeBracket finds the ']' that ends the segment starting at s[0]=='[':
// the first one followed by '.', '[' or the end.
func closeBracket(s string) int {
	for i := 1; i < len(s); i++ {
		if s[i] == ']' && (i+1 == len(s) || s[i+1] == '.' || s[i+1] == '[') {
			return i
		}
	}
	return len(s) - 1
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldJSON returns the JSON name of Go field name in struct t, its type,
// and whether it is an embedded struct that JSON flattens.
func fieldJSON(t reflect.Type, name string) (string, reflect.Type, bool) {
	if t == nil || t.Kind() != reflect.Struct {
		return name, nil, false
	}
	f, ok := t.FieldByName(name)
	if !ok {
		return name, nil, false
	}
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if f.Anonymous && tag == "" && deref(f.Type).Kind() == reflect.Struct {
		return "", f.Type, true
	}
	if tag == "" || tag == "-" {
		tag = f.Name
	}
	return tag, f.Type, false
}

// Message builds the plain-English message of a failing tag. Tags it does
// not know read `Must satisfy the "tag" rule`. A field-comparison tag
// (eqfield=Password) names the other field as validator does, by its Go
// name; Issues replaces it with the JSON name.
func Message(fe validator.FieldError) string {
	tag, param := fe.Tag(), fe.Param()
	kind := fe.Kind()
	isText := kind == reflect.String
	isList := kind == reflect.Slice || kind == reflect.Array || kind == reflect.Map
	count := func(word string) string {
		n, err := strconv.Atoi(param)
		if err != nil {
			return param + " " + word + "s"
		}
		if n == 1 {
			return "1 " + word
		}
		return param + " " + word + "s"
	}
	switch tag {
	case "required", "required_if", "required_unless", "required_with", "required_with_all",
		"required_without", "required_without_all":
		return "Required"
	case "excluded_if", "excluded_unless", "excluded_with", "excluded_with_all", "excluded_without", "excluded_without_all":
		return "Must not be given here"
	case "min", "gte":
		switch {
		case isText:
			return "Must be at least " + count("character") + " long"
		case isList:
			return "Must have at least " + count("item")
		}
		return "Must be at least " + param
	case "max", "lte":
		switch {
		case isText:
			return "Must be at most " + count("character") + " long"
		case isList:
			return "Must have at most " + count("item")
		}
		return "Must be at most " + param
	case "gt":
		switch {
		case isText:
			return "Must be longer than " + count("character")
		case isList:
			return "Must have more than " + count("item")
		}
		return "Must be greater than " + param
	case "lt":
		switch {
		case isText:
			return "Must be shorter than " + count("character")
		case isList:
			return "Must have fewer than " + count("item")
		}
		return "Must be less than " + param
	case "len":
		switch {
		case isText:
			return "Must be exactly " + count("character") + " long"
		case isList:
			return "Must have exactly " + count("item")
		}
		return "Must be " + param
	case "eq", "eq_ignore_case":
		return "Must be " + param
	case "ne", "ne_ignore_case":
		return "Must not be " + param
	case "oneof", "oneofci":
		vals := strings.Fields(param)
		if isText {
			for i, v := range vals {
				vals[i] = strconv.Quote(v)
			}
		}
		return "Must be one of: " + strings.Join(vals, ", ")
	case "email":
		return "Must be a valid email address"
	case "url", "http_url", "https_url", "uri", "url_encoded":
		return "Must be a valid URL"
	case "uuid", "uuid3", "uuid4", "uuid5", "uuid_rfc4122", "uuid3_rfc4122", "uuid4_rfc4122", "uuid5_rfc4122":
		return "Must be a valid UUID"
	case "ip", "ipv4", "ipv6", "ip_addr", "ip4_addr", "ip6_addr":
		return "Must be a valid IP address"
	case "cidr", "cidrv4", "cidrv6":
		return "Must be a valid CIDR network"
	case "hostname", "hostname_rfc1123", "fqdn":
		return "Must be a valid host name"
	case "alpha", "alphaunicode":
		return "Must contain only letters"
	case "alphanum", "alphanumunicode":
		return "Must contain only letters and digits"
	case "numeric", "number":
		return "Must contain only digits"
	case "lowercase":
		return "Must be lower case"
	case "uppercase":
		return "Must be upper case"
	case "contains":
		return "Must contain " + strconv.Quote(param)
	case "excludes":
		return "Must not contain " + strconv.Quote(param)
	case "startswith":
		return "Must start with " + strconv.Quote(param)
	case "endswith":
		return "Must end with " + strconv.Quote(param)
	case "unique":
		return "Must not contain duplicates"
	case "datetime":
		return "Must be a date-time in the layout " + param
	case "e164":
		return "Must be a phone number in E.164 format"
	case "json":
		return "Must be valid JSON"
	case "boolean":
		return "Must be true or false"
	case "hexcolor", "rgb", "rgba", "hsl", "hsla", "iscolor":
		return "Must be a valid color"
	case "eqfield", "eqcsfield":
		return "Must equal " + param
	case "nefield", "necsfield":
		return "Must not equal " + param
	case "gtfield", "gtcsfield":
		return "Must be greater than " + param
	case "gtefield", "gtecsfield":
		return "Must be at least " + param
	case "ltfield", "ltcsfield":
		return "Must be less than " + param
	case "ltefield", "ltecsfield":
		return "Must be at most " + param
	}
	return `Must satisfy the "` + tag + `" rule`
}
