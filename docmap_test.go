package fx_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureNamesEverySourceFile: ARCHITECTURE.md's table of the
// core names every source file of the package, so a reader following a
// request finds each file's place, and it says where the timeouts live;
// its table of validate/, after it, names every source file of validate
// by its stage.
func TestArchitectureNamesEverySourceFile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	arch := string(b)
	// validate/'s table follows the core's: each names its own files
	core, validate, _ := strings.Cut(arch, "## validate/, stage by stage")
	for dir, table := range map[string]string{".": core, "validate": validate} {
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := f.Name()
			if f.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			if !strings.Contains(table, "`"+name+"`") {
				t.Errorf("ARCHITECTURE.md's table of %s does not name %s", dir, name)
			}
		}
	}
	if !strings.Contains(arch, "Where do timeouts live: in internal/conn") {
		t.Error("ARCHITECTURE.md does not say where the timeouts live (the connection layer, internal/conn, first)")
	}
}

// TestExportedDocsNameNoInternals: what go doc shows users (the package
// comment, the doc of every exported declaration and of every exported
// field) names no source file and no unexported identifier of the
// package, in every package a user imports (the core, the kit, the nested
// modules; not internal/, the examples, bench/ or scripts/); the
// maintainers' map is ARCHITECTURE.md. An unexported name is looked for
// when it cannot be an English word (it has an upper-case letter after
// the first, like checkRequestLine), and an unexported method wherever it
// is named with its type (App.dispatch).
func TestExportedDocsNameNoInternals(t *testing.T) {
	t.Parallel()
	skip := map[string]bool{"internal": true, "testdata": true, "examples": true, "bench": true, "scripts": true, "node_modules": true}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (skip[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			exportedDocsNameNoInternals(t, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// exportedDocsNameNoInternals is TestExportedDocsNameNoInternals for the
// package in dir (nothing when dir holds no package but main).
func exportedDocsNameNoInternals(t *testing.T, dir string) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{} // every source file of the package, by path
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(dir, name)
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" {
			return
		}
		files[path] = f
	}
	internal := map[string]bool{}
	camel := regexp.MustCompile(`^[a-z][a-z0-9]*[A-Z]`)
	for _, f := range files {
		for _, d := range f.Decls {
			for _, name := range declNames(d) {
				if !ast.IsExported(name) && camel.MatchString(name) {
					internal[name] = true
				}
			}
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && !fd.Name.IsExported() {
				internal[recvName(fd.Recv)+"."+fd.Name.Name] = true
			}
		}
	}
	fileName := regexp.MustCompile(`\b[a-z_0-9]+\.go\b`)
	word := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(\.[a-z_][A-Za-z0-9_]*)?`)
	check := func(where string, cg *ast.CommentGroup) {
		if cg == nil {
			return
		}
		text := cg.Text()
		if m := fileName.FindString(text); m != "" {
			t.Errorf("%s: %s: the doc names the source file %s", dir, where, m)
		}
		for _, w := range word.FindAllString(text, -1) {
			name, member, _ := strings.Cut(w, ".")
			if internal[w] || internal[name] || internal[member] {
				t.Errorf("%s: %s: the doc names the unexported %s", dir, where, w)
			}
		}
	}
	for name, f := range files {
		if f.Doc != nil {
			check(name+": package comment", f.Doc)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || exportedRecv(d.Recv)) {
					check(d.Name.Name, d.Doc)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						check(s.Name.Name, d.Doc)
						check(s.Name.Name, s.Doc)
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								if len(fld.Names) > 0 && fld.Names[0].IsExported() {
									check(s.Name.Name+"."+fld.Names[0].Name, fld.Doc)
									check(s.Name.Name+"."+fld.Names[0].Name, fld.Comment)
								}
							}
						}
					case *ast.ValueSpec:
						if s.Names[0].IsExported() {
							check(s.Names[0].Name, d.Doc)
							check(s.Names[0].Name, s.Doc)
							check(s.Names[0].Name, s.Comment)
						}
					}
				}
			}
		}
	}
}

// declNames returns the names a top-level declaration introduces.
func declNames(d ast.Decl) []string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
	case *ast.GenDecl:
		var names []string
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
		return names
	}
	return nil
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(fl *ast.FieldList) bool { return ast.IsExported(recvName(fl)) }

// recvName returns the name of a method's receiver type ("" if it has
// none the parser can name).
func recvName(fl *ast.FieldList) string {
	t := fl.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestCatalogDocsSayWhichToUse: the catalog has one exported name per
// use (ErrorCodes names a code, ErrorStatus gives its status), and their
// docs show the use and say that writing to them changes nothing sent.
func TestCatalogDocsSayWhichToUse(t *testing.T) {
	t.Parallel()
	docs := declDocs(t, "catalog.go")
	for name, wants := range map[string][]string{
		"ErrorCodes":  {"compare a code with ErrorCodes.NotFound", "never reads ErrorCodes while serving"},
		"ErrorStatus": {"status, ok := fx.ErrorStatus[code]", "never reads it while serving"},
	} {
		for _, want := range wants {
			if !strings.Contains(docs[name], want) {
				t.Errorf("the doc of %s does not say %q:\n%s", name, want, docs[name])
			}
		}
	}
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
