// Package playground adapts go-playground/validator/v10 to fx's
// validate.Schema, so that a struct with `validate:"..."` tags can be a
// route contract's Body or Query:
//
//	app.Route(fx.Route{
//		Method: "POST", Path: "/orders",
//		Body:   playground.Struct[Order](nil),
//		Handler: func(c *fx.Ctx) error {
//			o, _ := fx.ValidBody[Order](c) // decoded once, already valid
//			...
//		},
//	})
//
// Issues use JSON names, never Go field names (["items","1","qty"], from
// the json tags), array indices and map keys are segments of their own,
// and messages are built from the failing tag ("min=1" on a number: "Must
// be at least 1"), never validator's Error() text.
//
// It is a module of its own, so that importing fx never pulls in
// validator/v10.
package playground
