package static_test

import (
	"io"
	"log/slog"

	"github.com/fxhq/fx"
)

// silentLogger keeps the tests' and examples' output to the responses.
var silentLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// quiet returns an App that logs nothing.
func quiet() *fx.App { return fx.New(fx.Config{Logger: silentLogger}) }
