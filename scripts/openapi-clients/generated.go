//go:build clients

package clients

// The packages the generated clients (gen/), their tests (live/) and
// cmd/orders-client import. go.mod leaves those folders out of go mod
// tidy (its ignore block: they cannot load before check.sh generates the
// clients), so these imports are what keeps the modules they come from in
// go.mod and go.sum: `go mod tidy` gives the same files on a fresh clone
// and after check.sh. A generator that starts importing a package of a
// module not listed here fails check.sh's build of gen/ ("no required
// module provides package"): add the package here. The `clients` build
// tag, which check.sh sets, compiles this file, the tests and
// cmd/orders-client; without it the module builds without gen/.
import (
	_ "github.com/fxhq/fx/client"
	_ "github.com/fxhq/fx/fxtest"
	_ "github.com/go-faster/errors"
	_ "github.com/go-faster/jx"
	_ "github.com/oapi-codegen/runtime"
	_ "github.com/ogen-go/ogen/conv"
	_ "github.com/ogen-go/ogen/http"
	_ "github.com/ogen-go/ogen/json"
	_ "github.com/ogen-go/ogen/ogenerrors"
	_ "github.com/ogen-go/ogen/ogenregex"
	_ "github.com/ogen-go/ogen/uri"
	_ "github.com/ogen-go/ogen/validate"
)
