package bench

import (
	"log/slog"

	"github.com/fxhq/fx"
)

// fxTypedIn is the input of fx's typed endpoint: the body, with
// TypedOrder's `validate` tags.
type fxTypedIn struct {
	Body TypedOrder
}

// NewFXTyped is the typed endpoint in fx: a typed operation (fx.Op)
// whose input struct carries the constraints; fx binds, checks every tag
// and answers 422 with every issue before the handler runs.
func NewFXTyped(int) Impl {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	fx.Op(app, "POST", TypedPath, func(c *fx.Ctx, in *fxTypedIn) (*TypedOrder, error) {
		return &in.Body, nil
	}, func(r *fx.Route) { r.Responses = []fx.ResponseDoc{{Status: 201}} })
	if err := app.Boot(); err != nil {
		panic(err)
	}
	return Impl{FastHTTP: app.Handler(), serve: app.Serve}
}
