package fx_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/fxhq/fx"
)

// The documentation is README.md and docs/*.md. These tests keep it true:
// every Go block compiles, every relative link resolves, the catalog table
// matches the catalog, and every table of measurements names the command
// that produced it and holds no row of zeros.

// docFiles returns README.md and every page under docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md pages (%v)", err)
	}
	return append([]string{"README.md"}, pages...)
}

// readDoc returns a documentation file's text.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docBlock is one fenced code block of a page.
type docBlock struct {
	file  string
	line  int    // of the first line inside the fence
	lang  string // the fence's info string
	text  string
	kind  string // the fragment marker's kind: "file", "decl" or "body"
	given string // declarations the marker adds around the block
}

// fragmentMarker is the HTML comment (invisible on GitHub) that says how a
// Go block that is not a whole file compiles:
//
//	<!-- fragment: decl -->   top-level declarations
//	<!-- fragment: body       statements (and func/type declarations
//	var app = fx.New()        at column 0), compiled as a function body;
//	-->                       the lines after the kind are declarations
//	                          the block assumes, added at top level.
//
// It must be the last thing before the fence. A Go block without it must
// be a whole file (it starts with "package").
var fragmentMarker = regexp.MustCompile(`(?s)^<!-- fragment: (\w+)(.*)-->$`)

// codeBlocks returns the fenced blocks of a page and the page's prose with
// those blocks blanked out (line numbers kept).
func codeBlocks(file, text string) (blocks []docBlock, prose string) {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		fence, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			out = append(out, lines[i])
			continue
		}
		b := docBlock{file: file, line: i + 2, lang: strings.TrimSpace(fence), kind: "file"}
		if before := strings.TrimSpace(strings.Join(out, "\n")); strings.HasSuffix(before, "-->") {
			if m := fragmentMarker.FindStringSubmatch(before[strings.LastIndex(before, "<!--"):]); m != nil {
				b.kind, b.given = m[1], strings.TrimSpace(m[2])
			}
		}
		var body []string
		out = append(out, "")
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
			out = append(out, "")
		}
		out = append(out, "")
		b.text = strings.Join(body, "\n")
		blocks = append(blocks, b)
	}
	return blocks, strings.Join(out, "\n")
}

// importPaths are the package names documentation blocks use without an
// import line, and the paths they stand for.
var importPaths = map[string]string{
	"fx": "github.com/fxhq/fx", "validate": "github.com/fxhq/fx/validate",
	"middleware": "github.com/fxhq/fx/middleware", "fxtest": "github.com/fxhq/fx/fxtest",
	"nethttp": "github.com/fxhq/fx/nethttp", "wasm": "github.com/fxhq/fx/wasm",
	"openapi": "github.com/fxhq/fx/openapi", "fxotel": "github.com/fxhq/fx/otel",
	"client": "github.com/fxhq/fx/client", "websocket": "github.com/fxhq/fx/websocket",
	"health": "github.com/fxhq/fx/health", "static": "github.com/fxhq/fx/static",
	"jwt": "github.com/fxhq/fx/middleware/jwt", "ratelimit": "github.com/fxhq/fx/middleware/ratelimit",
	"prometheus": "github.com/prometheus/client_golang/prometheus",
	"trace":      "go.opentelemetry.io/otel/trace", "metric": "go.opentelemetry.io/otel/metric",
	"context": "context", "errors": "errors", "fmt": "fmt", "log": "log", "slog": "log/slog",
	"os": "os", "time": "time", "net": "net", "http": "net/http", "testing": "testing",
	"strings": "strings", "sql": "database/sql", "rsa": "crypto/rsa",
	"runtime": "runtime", "strconv": "strconv",
	"pgx": "github.com/jackc/pgx/v5", "pgxpool": "github.com/jackc/pgx/v5/pgxpool", "pgconn": "github.com/jackc/pgx/v5/pgconn",
}

// moduleOf names the module directory a block's imports need: the nested
// modules' packages are not in the root module's build list.
var moduleOf = map[string]string{
	"github.com/fxhq/fx/otel":                                    "otel",
	"github.com/fxhq/fx/prometheus":                              "prometheus",
	"github.com/prometheus/client_golang/prometheus":             "prometheus",
	"github.com/fxhq/fx/middleware/redisstore":                   "middleware/redisstore",
	"github.com/redis/go-redis/v9":                               "middleware/redisstore",
	"github.com/fxhq/fx/websocket":                               "websocket",
	"github.com/fxhq/fx/scripts/openapi-clients/gen/ogen/orders": "scripts/openapi-clients",
	"github.com/jackc/pgx/v5":                                    "bench/techempower",
	"github.com/jackc/pgx/v5/pgxpool":                            "bench/techempower",
	"github.com/jackc/pgx/v5/pgconn":                             "bench/techempower",
	"github.com/fxhq/fx/bench/techempower/internal/world":        "bench/techempower",
}

var lineComment = regexp.MustCompile(`(?m)//.*$`)

// goSource turns a Go block into a compilable file, with //line
// directives so the compiler's messages name the page and its line.
func goSource(b docBlock, pkg string) (src, module string, err error) {
	lineDir := func(n int) string { return fmt.Sprintf("//line %s:%d\n", b.file, n) }
	module = "."
	if b.kind == "file" {
		if !strings.HasPrefix(b.text, "package ") {
			return "", "", fmt.Errorf("a Go block that is not a whole file needs a <!-- fragment: ... --> marker")
		}
		for imp, dir := range moduleOf {
			if strings.Contains(b.text, `"`+imp+`"`) {
				module = dir
			}
		}
		return lineDir(b.line) + b.text + "\n", module, nil
	}
	var imports, decls, body []string
	var declared []string
	lines := strings.Split(b.text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "import "):
			imports = append(imports, lineDir(b.line+i)+l)
		case b.kind == "body" && (strings.HasPrefix(l, "func ") || strings.HasPrefix(l, "type ")):
			start := i
			for !strings.HasPrefix(lines[i], "}") && !(strings.HasPrefix(lines[i], "type ") && !strings.HasSuffix(lines[i], "{")) {
				i++
			}
			decls = append(decls, lineDir(b.line+start)+strings.Join(lines[start:i+1], "\n"))
		case b.kind == "body":
			body = append(body, lineDir(b.line+i)+l)
			if m := regexp.MustCompile(`^(\w+(?:, *\w+)*) :=`).FindStringSubmatch(l); m != nil {
				for name := range strings.SplitSeq(m[1], ",") {
					if name = strings.TrimSpace(name); name != "_" && !slices.Contains(declared, name) {
						declared = append(declared, name)
					}
				}
			}
		default:
			decls = append(decls, lineDir(b.line+i)+l)
		}
	}
	code := b.given + "\n" + strings.Join(decls, "\n") + "\n" + strings.Join(body, "\n")
	code = lineComment.ReplaceAllString(code, "") // prose may name a package the code does not use
	var auto []string
	for name, path := range importPaths {
		if regexp.MustCompile(`(^|[^\w.])`+name+`\.`).MatchString(code) && !slices.ContainsFunc(imports, func(s string) bool { return strings.Contains(s, `"`+path+`"`) }) {
			auto = append(auto, strconv.Quote(path))
		}
	}
	slices.Sort(auto)
	all := strings.Join(auto, "\n")
	for imp, dir := range moduleOf {
		if strings.Contains(all+strings.Join(imports, "\n"), `"`+imp+`"`) {
			module = dir
		}
	}
	var s strings.Builder
	fmt.Fprintf(&s, "package %s\n\nimport (\n%s\n)\n\n", pkg, all)
	for _, imp := range imports {
		s.WriteString(strings.Replace(imp, "import ", "import (\n", 1) + "\n)\n")
	}
	s.WriteString("\n//line " + b.file + " (fragment marker):1\n" + b.given + "\n\n")
	s.WriteString(strings.Join(decls, "\n") + "\n")
	if b.kind == "body" {
		s.WriteString("\nfunc _() {\n" + strings.Join(body, "\n") + "\n")
		for _, name := range declared { // a fragment's variables count as used
			s.WriteString("\t_ = " + name + "\n")
		}
		s.WriteString("}\n")
	}
	return s.String(), module, nil
}

// TestDocsCodeBlocksCompile type-checks and vets every Go block of the
// documentation, each as its own package in a temporary directory of the
// module whose packages it imports (so imports resolve to this checkout),
// with one `go vet` per module.
func TestDocsCodeBlocksCompile(t *testing.T) {
	// Not parallel: its go vet processes take both cores for seconds, and
	// run here, before the parallel tests start, they cannot starve the
	// timeout tests that run in parallel with each other.
	perModule := map[string][]docBlock{}
	n := 0
	for _, f := range docFiles(t) {
		blocks, _ := codeBlocks(f, readDoc(t, f))
		for _, b := range blocks {
			if b.lang != "go" {
				continue
			}
			n++
			pkg := fmt.Sprintf("b%02d", n)
			src, module, err := goSource(b, pkg)
			if err != nil {
				t.Errorf("%s:%d: %v", b.file, b.line, err)
				continue
			}
			b.text = src
			b.kind = pkg
			perModule[module] = append(perModule[module], b)
		}
	}
	if n == 0 {
		t.Fatal("no Go blocks found")
	}
	var wg sync.WaitGroup
	for module, blocks := range perModule {
		if module == "scripts/openapi-clients" && !clientsGenerated() {
			// docs/clients.md's program needs ogen's client, which
			// scripts/openapi-clients/check.sh generates and git does not
			// keep; its TestOrdersClientProgram (run by check.sh, in
			// .ci/run) checks that the page shows cmd/orders-client as it
			// is, and builds and runs it.
			t.Logf("%d block(s) of module %s not vetted: its clients are not generated (bash scripts/openapi-clients/check.sh)", len(blocks), module)
			continue
		}
		wg.Go(func() {
			if err := vetBlocks(t, module, blocks); err != nil {
				t.Errorf("module %s: %v", module, err)
			}
		})
	}
	wg.Wait()
}

// clientsGenerated reports whether scripts/openapi-clients/check.sh has
// generated the Go clients in this checkout.
func clientsGenerated() bool {
	_, err := os.Stat(filepath.Join("scripts", "openapi-clients", "gen", "ogen", "orders", "oas_client_gen.go"))
	return err == nil
}

// vetBlocks writes blocks under module/testdata and runs go vet on them.
func vetBlocks(t *testing.T, module string, blocks []docBlock) error {
	root, err := filepath.Abs(module)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "testdata"), 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(filepath.Join(root, "testdata"), "docblocks-")
	if err != nil {
		return err
	}
	if os.Getenv("FX_DOCBLOCKS_KEEP") == "" {
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	for _, b := range blocks {
		pkgDir := filepath.Join(dir, b.kind)
		if err := os.Mkdir(pkgDir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(pkgDir, "block.go"), []byte(b.text), 0o644); err != nil {
			return err
		}
	}
	rel, _ := filepath.Rel(root, dir)
	cmd := exec.Command("go", "vet", "./"+filepath.ToSlash(rel)+"/...")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go vet: %v\n%s", err, out.String())
	}
	return nil
}

// TestDocsFragmentsAreChecked: a block with a compile error is caught,
// with the page and line in the message (the checker itself works).
func TestDocsFragmentsAreChecked(t *testing.T) {
	t.Parallel()
	b := docBlock{file: "docs/x.md", line: 7, kind: "body", given: "var app = fx.New()", text: "app.Get(\"/\", 42)"}
	src, module, err := goSource(b, "bad")
	if err != nil || module != "." {
		t.Fatalf("goSource: %v %q", err, module)
	}
	b.text, b.kind = src, "bad"
	err = vetBlocks(t, ".", []docBlock{b})
	if err == nil || !strings.Contains(err.Error(), "docs/x.md:7") {
		t.Fatalf("a broken block passed, or its error does not name the page: %v", err)
	}
}

// mdLink is a Markdown link or image target in prose (code spans and
// blocks are not prose).
var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpan = regexp.MustCompile("`[^`\n]*`")
)

// TestDocsLinksResolve: every relative link of README.md and docs/*.md
// names a file that exists and, with a #fragment, a heading of that file
// (GitHub's anchor rules).
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		_, prose := codeBlocks(file, readDoc(t, file))
		anchors[file] = headingAnchors(prose)
		return anchors[file]
	}
	links := 0
	for _, f := range docFiles(t) {
		_, prose := codeBlocks(f, readDoc(t, f))
		for i, line := range strings.Split(prose, "\n") {
			line = codeSpan.ReplaceAllString(line, "")
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, frag, _ := strings.Cut(target, "#")
				file := f
				if path != "" {
					file = filepath.Join(filepath.Dir(f), path)
					if _, err := os.Stat(file); err != nil {
						t.Errorf("%s:%d: link %q: %v", f, i+1, target, err)
						continue
					}
				}
				if frag != "" && (!strings.HasSuffix(file, ".md") || !anchorsOf(file)[frag]) {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", f, i+1, target, file, frag)
				}
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative links found")
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a page:
// the heading's text (without Markdown), lower-cased, with everything but
// letters, digits, spaces, hyphens and underscores removed and spaces made
// hyphens; a repeated anchor gets -1, -2, ...
func headingAnchors(prose string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	linkText := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	for _, line := range strings.Split(prose, "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		h = linkText.ReplaceAllString(strings.TrimSpace(h), "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// TestDocsCatalogTable keeps the table of codes in docs/errors.md and the
// catalog in step: same codes, same statuses, nothing missing on either
// side.
func TestDocsCatalogTable(t *testing.T) {
	t.Parallel()
	s := readDoc(t, "docs/errors.md")
	start := strings.Index(s, "<!-- catalog:start -->")
	end := strings.Index(s, "<!-- catalog:end -->")
	if start < 0 || end < start {
		t.Fatal("docs/errors.md has no catalog table between the catalog markers")
	}
	row := regexp.MustCompile("^\\| `(FX_[A-Z_]+)` \\| (\\d{3}) \\|")
	table := map[string]int{}
	for _, line := range strings.Split(s[start:end], "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := table[m[1]]; dup {
			t.Errorf("docs/errors.md lists %s twice", m[1])
		}
		table[m[1]], _ = strconv.Atoi(m[2])
	}
	for code, status := range fx.ErrorStatus {
		got, ok := table[code]
		switch {
		case !ok:
			t.Errorf("docs/errors.md table lacks %s", code)
		case got != status:
			t.Errorf("docs/errors.md says %s is %d, the catalog says %d", code, got, status)
		}
	}
	for code := range table {
		if _, ok := fx.ErrorStatus[code]; !ok {
			t.Errorf("docs/errors.md lists %s, which is not in fx.ErrorStatus", code)
		}
	}
}

// measured is a table cell that starts with a figure: "91.3", "~85 ns",
// "1,520,536", "17.5 %".
var measured = regexp.MustCompile(`^~?\d[\d, ]*(\.\d+)?($|[^\d])`)

// command is what names the command behind a table's figures: a go test or
// go run line, or a script.
var command = regexp.MustCompile(`go (test|run) |\.sh\b`)

// TestDocsTablesNameTheirCommand: in README.md and docs/*.md, a table of
// measurements (a row with two or more cells beyond the first that start
// with a figure) has the command that produced it in the prose, code or
// table between the previous heading or table and its last row; and no
// table row reports a measurement of nothing (all numeric cells zero: what
// a benchmark script prints when its run failed or was cut short).
func TestDocsTablesNameTheirCommand(t *testing.T) {
	t.Parallel()
	tables := 0
	for _, f := range docFiles(t) {
		lines := strings.Split(readDoc(t, f), "\n")
		from, isMeasured := 0, false
		for i, line := range lines {
			inTable := strings.HasPrefix(line, "|")
			if strings.HasPrefix(line, "#") {
				from = i
			}
			if inTable {
				cells := strings.Split(strings.Trim(line, "| "), "|")
				numbers, figures, nonzero := 0, 0, false
				for _, cell := range cells[1:] { // the first cell names the row (it may be a number: connections)
					cell = strings.TrimSpace(cell)
					if measured.MatchString(cell) {
						figures++
					}
					v, err := strconv.ParseFloat(cell, 64)
					if err != nil {
						continue
					}
					numbers++
					nonzero = nonzero || v != 0
				}
				if numbers >= 2 && !nonzero {
					t.Errorf("%s:%d: a table row of zeros: %s", f, i+1, line)
				}
				isMeasured = isMeasured || figures >= 2
			}
			if !inTable && i > 0 && strings.HasPrefix(lines[i-1], "|") { // a table ended
				if isMeasured {
					tables++
					if !command.MatchString(strings.Join(lines[from:i], "\n")) {
						t.Errorf("%s:%d: a table of measurements with no command before it", f, i)
					}
				}
				from, isMeasured = i, false
			}
		}
	}
	if tables == 0 {
		t.Fatal("no table of measurements found: the detection is broken")
	}
}
