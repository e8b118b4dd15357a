//go:build clients

package clients

// The packages the generated clients import. check.sh generates the
// clients under gen/ (git ignores them); these imports keep the modules
// they come from in go.mod, so that `go mod tidy` gives the same go.mod
// whether or not the clients have been generated. The `clients` build
// tag, which check.sh sets, compiles this file, the generated clients'
// tests and cmd/orders-client; without it the module builds without gen/.
import (
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
