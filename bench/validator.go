package bench

import (
	"errors"
	"reflect"
	"slices"
	"strings"

	"github.com/go-playground/validator/v10"
)

// structValidator is the validator/v10 instance of the Echo and Fiber
// implementations (Gin brings its own, configured the same way).
var structValidator = newValidator("validate")

func newValidator(tag string) *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.SetTagName(tag)
	useJSONNames(v)
	return v
}

// useJSONNames makes v report fields by their JSON names, as a client
// knows them.
func useJSONNames(v *validator.Validate) {
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
}

// IssuesFromValidator turns validator/v10's errors into issues with the
// messages of CheckOrder (and, for the typed endpoint's rules, messages
// in the same style), sorted by path as fx sorts them. It returns nil
// when err is not a validator.ValidationErrors.
func IssuesFromValidator(err error) []Issue {
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		return nil
	}
	issues := make([]Issue, 0, len(ves))
	for _, fe := range ves {
		msg := fe.Error()
		switch fe.Tag() {
		case "required":
			msg = MsgRequired
		case "min", "gte":
			msg = "Must be at least " + fe.Param()
		case "max", "lte":
			msg = "Must be at most " + fe.Param()
		case "email":
			msg = MsgEmail
		case "alphanum":
			msg = msgAlphanum
		}
		// The namespace is "Order.lines[0].sku" (JSON names, useJSONNames):
		// the path is what follows the struct's name.
		_, ns, _ := strings.Cut(fe.Namespace(), ".")
		issues = append(issues, Issue{Location: "body", Path: splitFieldPath(ns), Message: msg})
	}
	slices.SortFunc(issues, func(a, b Issue) int { return slices.Compare(a.Path, b.Path) })
	return issues
}

// validationFailure maps a bind or validate error to the 422 the service
// answers: the issues of a validator error, or one body issue otherwise.
func validationFailure(err error) *AppError {
	if issues := IssuesFromValidator(err); issues != nil {
		return NewValidationError(issues)
	}
	return BadJSONError()
}
