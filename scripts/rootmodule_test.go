package scripts_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestRootModuleRequiresOnlyTheCore: every user of fx gets the root
// module's requirements in their module graph, so it requires only what the
// core and its light packages import (HTTP, routing, JSON, JWT for
// middleware/jwt, the public suffix list for CORS: golang.org/x/net is in
// every user's graph already, through fasthttp). Anything heavier belongs
// in a nested module, as wazero does in wasm/.
func TestRootModuleRequiresOnlyTheCore(t *testing.T) {
	t.Parallel()
	allowed := []string{
		"github.com/valyala/fasthttp",
		"github.com/fasthttp/router",
		"github.com/goccy/go-json",
		"github.com/valyala/bytebufferpool",
		"github.com/golang-jwt/jwt/v5",
		"golang.org/x/net",
	}
	path := filepath.Join("..", "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if !r.Indirect && !slices.Contains(allowed, r.Mod.Path) {
			t.Errorf("the root module requires %s directly; move what needs it into a nested module", r.Mod.Path)
		}
	}
}
