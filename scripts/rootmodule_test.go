package scripts_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// TestExamplesImportNoInternalPackage: a user copies an example, its tests
// included, into a module of their own, where an internal package of fx
// cannot be imported; so no file of examples/ imports one (what an
// example's test needs from fx is fxtest's, or written in the example).
// An example's own internal packages go with it and are allowed.
func TestExamplesImportNoInternalPackage(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "examples")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		example := "github.com/fxhq/fx/examples/" + strings.SplitN(filepath.ToSlash(rel), "/", 2)[0] + "/"
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, "github.com/fxhq/fx/") || strings.HasPrefix(p, example) {
				continue
			}
			if slices.Contains(strings.Split(p, "/"), "internal") {
				t.Errorf("%s imports %s, an internal package of fx: a user who copies the example cannot", filepath.ToSlash(path), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no Go file under %s", root)
	}
}
