package bench

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
)

// humaTypedOrder is TypedOrder as Huma declares it: JSON Schema keywords
// as tags, a field without omitempty required.
type humaTypedOrder struct {
	Customer string          `json:"customer" minLength:"1" maxLength:"80"`
	Email    string          `json:"email,omitempty" format:"email"`
	Lines    []humaTypedLine `json:"lines" minItems:"1" maxItems:"50"`
}

type humaTypedLine struct {
	SKU string `json:"sku" minLength:"3" pattern:"^[a-zA-Z0-9]+$"`
	Qty int    `json:"qty" minimum:"1" maximum:"100"`
}

// NewHumaTyped is the typed endpoint in Huma v2 on chi, configured as
// NewHuma is: Huma validates the body against the JSON Schema of
// humaTypedOrder's tags before the operation runs, and its errors become
// the envelope through humaNewError.
func NewHumaTyped(int) Impl {
	r := chi.NewMux()
	r.NotFound(stdNotFound)
	api := humachi.New(r, humaConfig())
	huma.Register(api, huma.Operation{OperationID: "create-typed-order", Method: http.MethodPost, Path: TypedPath, DefaultStatus: 201},
		func(_ context.Context, in *humaBody[humaTypedOrder]) (*humaBody[humaTypedOrder], error) {
			return in, nil
		})
	return Impl{HTTP: r}
}
