package fx_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocMapNamesEverySourceFile: the package comment's map ("the life of
// one request", doc.go) names every source file of the package, so a
// reader following a request finds each file's place, and it says where
// the timeouts live.
func TestDocMapNamesEverySourceFile(t *testing.T) {
	t.Parallel()
	doc := packageDoc(t)
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := f.Name()
		if f.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(doc) {
			t.Errorf("doc.go's map does not name %s", name)
		}
	}
	if !strings.Contains(doc, "Where do timeouts live: in internal/conn") {
		t.Error("doc.go does not say where the timeouts live (the connection layer, internal/conn, first)")
	}
}

// TestCatalogDocsSayWhichToUse: of the four names of the catalog, the
// docs point to the constants and StatusOf, and call ErrorCodes and
// ErrorStatus the contract's compatibility names.
func TestCatalogDocsSayWhichToUse(t *testing.T) {
	t.Parallel()
	docs := declDocs(t, "catalog.go")
	for name, want := range map[string]string{
		"ErrorCodes":  "use the Code constants instead",
		"ErrorStatus": "use StatusOf instead",
		"StatusOf":    "Use it, with the Code constants, to look a status up",
	} {
		if !strings.Contains(docs[name], want) {
			t.Errorf("the doc of %s does not say %q:\n%s", name, want, docs[name])
		}
	}
	for _, name := range []string{"ErrorCodes", "ErrorStatus"} {
		if !strings.Contains(docs[name], "compatibility name") {
			t.Errorf("the doc of %s does not call it a compatibility name", name)
		}
	}
}

// packageDoc returns the package comment of doc.go.
func packageDoc(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	return f.Doc.Text()
}

// declDocs returns the doc comment of every top-level declaration of
// file, by name, its words joined by single spaces.
func declDocs(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	text := func(cg *ast.CommentGroup) string { return strings.Join(strings.Fields(cg.Text()), " ") }
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			docs[d.Name.Name] = text(d.Doc)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if v, ok := s.(*ast.ValueSpec); ok {
					for _, n := range v.Names {
						docs[n.Name] = text(d.Doc)
					}
				}
			}
		}
	}
	return docs
}
