// Package playground adapts go-playground/validator/v10 to fx's
// validate.Schema, so that a struct with `validate:"..."` tags can be a
// route contract's Body or Query:
//
//	type Order struct {
//		Customer string `json:"customer" validate:"required"`
//		Items    []Item `json:"items" validate:"required,min=1,max=100,dive"`
//	}
//
//	app.Route(fx.Route{
//		Method: "POST", Path: "/orders",
//		Body:   playground.Struct[Order](nil),
//		Handler: func(c *fx.Ctx) error {
//			o, _ := fx.ValidBody[Order](c) // decoded once, already valid
//			return c.JSON(201, o)
//		},
//	})
//
// Struct checks a body and Query a query string (its values coerced as
// validate.QueryStruct does); both take the *validator.Validate to use,
// nil meaning Default (validator.New with WithRequiredStructEnabled,
// shared). A Schema is immutable and safe to share between routes and
// goroutines. Its Result.Value is a *T. Issues and Message translate
// validator's errors for code that calls validator itself.
//
// A body is first decoded into a T by validate.Struct[T], so the type
// error of every mistyped field is reported, all together; then the tags
// of the fields that decoded are checked. Issues use JSON names, never Go
// field names (["items","1","qty"], from the json tags), array indices
// and map keys are segments of their own, and messages are built from the
// failing tag ("min=1" on a number: "Must be at least 1"), never
// validator's Error() text.
//
// # Cost
//
// A valid body costs the go-json decode into a T (Schema implements
// validate.Decoder: no intermediate tree) plus what validator's Struct
// costs, which allocates nothing for most tags. On a failing body the type
// check stops at the issue limit (validate.Limited, LimitedDecoder), but
// validator/v10 has no way to stop early: once it runs it checks every
// field of the decoded T and allocates one error per failing field. Bound
// large slices with a max= tag (BenchmarkHugeInvalidBody in this module
// measures the difference).
//
// # Lifetime
//
// The body bytes are not retained: the *T of a Result is decoded into
// memory of its own, and a handler may keep it.
//
// # Errors
//
// Issues become fx's 422 FX_VALIDATION_ERROR (details.issues, at location
// "body" or "query"). An error validator returns that is not a list of
// validation failures (an InvalidValidationError, a misuse) is returned
// through validate.Fail: fx answers 500 FX_INTERNAL_ERROR and logs it.
//
// It is a module of its own, so that importing fx never pulls in
// validator/v10.
package playground
