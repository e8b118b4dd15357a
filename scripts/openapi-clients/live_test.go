package clients_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests of this file run the generated clients against the examples
// as their users run them: each example is built (go build, as `go run
// ./examples/NAME` does) and started on 127.0.0.1, and every call goes
// over the loopback through the client's own request encoding and
// response decoding. examples/orders and examples/openapi run as their
// TestServeForClients serves them: the App main builds, where a request
// can be held in the orders handler (its 409 and 503 need it) and the
// user store marked unreachable (GET /readyz's 503 needs it).

// example is a running example server.
type example struct {
	name string
	base string // http://127.0.0.1:PORT
	// control, for a server run by its package's TestServeForClients,
	// sends it one command line and waits until it is done.
	control func(line string)
}

var binDir string // where the example binaries are built

// builds holds one build per output (an example binary, a test binary).
var builds sync.Map

type buildResult struct {
	once sync.Once
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fx-openapi-clients-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is the fx repository this module sits in.
func repoRoot(t testing.TB) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// build runs `go sub -o out args...` in the repository once per test
// binary and returns out.
func build(t *testing.T, out, sub string, args ...string) string {
	t.Helper()
	out = filepath.Join(binDir, out)
	v, _ := builds.LoadOrStore(out, &buildResult{})
	b := v.(*buildResult)
	b.once.Do(func() {
		cmd := exec.Command("go", append([]string{sub, "-o", out}, args...)...)
		cmd.Dir = repoRoot(t)
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go %s %s: %v\n%s", sub, strings.Join(args, " "), err, msg)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return out
}

// startExample builds examples/NAME (as `go run ./examples/NAME` does)
// and starts a fresh process of it on 127.0.0.1 (port 0: its log names
// the port), stopped when the test ends.
func startExample(t *testing.T, name string) example {
	t.Helper()
	cmd := exec.Command(build(t, name, "build", "./examples/"+name))
	cmd.Env = append(os.Environ(), "ADDR=127.0.0.1:0", "FX_ENV=production")
	lines, _ := start(t, cmd, "stderr")
	return example{name: name, base: "http://" + waitAddr(t, name, lines)}
}

// startServeHook starts examples/NAME's TestServeForClients: the App main
// builds, served on 127.0.0.1, with the means to reach the declared
// answers a request alone cannot (see that test), driven through
// example.control.
func startServeHook(t *testing.T, name string) example {
	t.Helper()
	cmd := exec.Command(build(t, name+".test", "test", "-c", "./examples/"+name), "-test.run", "^TestServeForClients$")
	cmd.Env = append(os.Environ(), "FX_SERVE_FOR_CLIENTS=1")
	lines, stdin := start(t, cmd, "stdout")
	ex := example{name: name, base: "http://" + waitAddr(t, name, lines)}
	ex.control = func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("examples/%s: TestServeForClients ended during %q", name, line)
				}
				if l == "ok "+line {
					return
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("examples/%s: no answer to %q within 30s", name, line)
			}
		}
	}
	return ex
}

// start starts cmd, killed when the test ends, and returns the lines of
// its stdout or stderr (which), read until it exits, and its stdin.
func start(t *testing.T, cmd *exec.Cmd, which string) (<-chan string, io.Writer) {
	t.Helper()
	var out io.Reader
	var err error
	if which == "stdout" {
		out, err = cmd.StdoutPipe()
	} else {
		out, err = cmd.StderrPipe()
	}
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Every line is read, so that the process never blocks on a full
	// pipe; the channel keeps the first ones.
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	return lines, stdin
}

// waitAddr waits for the first line naming 127.0.0.1:PORT: the listening
// line (each example logs it its own way).
func waitAddr(t *testing.T, name string, lines <-chan string) string {
	t.Helper()
	port := regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("examples/%s exited without listening", name)
			}
			if m := port.FindString(l); m != "" {
				return m
			}
		case <-timeout:
			t.Fatalf("examples/%s did not name its address within 60s", name)
		}
	}
}

// outcome is one declared response: an operation, a status and, for an
// error, one of the codes declared for it.
type outcome struct {
	op     string // operationId
	status int
	code   string
}

func (o outcome) String() string {
	return strings.TrimSpace(fmt.Sprintf("%s %d %s", o.op, o.status, o.code))
}

// servedDocument fetches the live example's /openapi.json and checks it
// is the document its clients were generated from (testdata/NAME.json):
// a served document that changed means the clients are stale.
func servedDocument(t *testing.T, ex example) map[string]any {
	t.Helper()
	resp, err := http.Get(ex.base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /openapi.json: %d %v", resp.StatusCode, err)
	}
	var served, generated map[string]any
	if err := json.Unmarshal(body, &served); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("testdata", ex.name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(committed, &generated); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(served, generated) {
		t.Fatalf("examples/%s serves a document other than testdata/%s.json, which its clients were generated from: "+
			"regenerate them (bash scripts/openapi-clients/check.sh)", ex.name, ex.name)
	}
	return served
}

// declaredOutcomes lists every response the document declares: for a
// success its status, for an error envelope each code its schema allows
// (the code's enum, or the discriminator's mapping of a status shared by
// codes whose details differ). bodyless are the successes declared
// without content.
func declaredOutcomes(t *testing.T, doc map[string]any) (out []outcome, bodyless map[outcome]bool) {
	t.Helper()
	schemas, _ := dig(doc, "components", "schemas").(map[string]any)
	resolve := func(s any) map[string]any {
		m, _ := s.(map[string]any)
		if ref, ok := m["$ref"].(string); ok {
			m, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return m
	}
	bodyless = map[outcome]bool{}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		for method, v := range item.(map[string]any) {
			op, ok := v.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			id, _ := op["operationId"].(string)
			if id == "" {
				t.Fatalf("%s %s has no operationId", method, path)
			}
			responses, _ := op["responses"].(map[string]any)
			for st, r := range responses {
				status, err := strconv.Atoi(st)
				if err != nil {
					t.Fatalf("%s: response %q is not a status", id, st)
				}
				schema := resolve(dig(r, "content", "application/json", "schema"))
				env := resolve(dig(schema, "properties", "error"))
				if env == nil {
					out = append(out, outcome{id, status, ""})
					if dig(r, "content") == nil {
						bodyless[outcome{id, status, ""}] = true
					}
					continue
				}
				var codes []string
				for _, c := range asSlice(dig(env, "properties", "code", "enum")) {
					codes = append(codes, c.(string))
				}
				mapping, _ := dig(env, "discriminator", "mapping").(map[string]any)
				for c := range mapping {
					codes = append(codes, c)
				}
				if len(codes) == 0 {
					t.Fatalf("%s %d: an error envelope with no code enum nor discriminator", id, status)
				}
				for _, c := range codes {
					out = append(out, outcome{id, status, c})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b outcome) int { return strings.Compare(a.String(), b.String()) })
	return out, bodyless
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// wire is an http.RoundTripper that keeps the status and the envelope's
// code of the last answer, for the recorder to hold the typed value
// against, and applies the request edit a call carries in its context
// (see withEdit): how a test sends what a generated client, true to the
// document, would not (no credentials, no required header, a body over
// the server's limit).
type wire struct {
	mu     sync.Mutex
	status int
	code   string
}

type editKey struct{}

// withEdit returns a context whose requests edit changes before they are
// sent.
func withEdit(ctx context.Context, edit func(*http.Request)) context.Context {
	return context.WithValue(ctx, editKey{}, edit)
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	if edit, ok := req.Context().Value(editKey{}).(func(*http.Request)); ok {
		req = req.Clone(req.Context())
		edit(req)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(body, &env)
	w.mu.Lock()
	w.status, w.code = resp.StatusCode, env.Error.Code
	w.mu.Unlock()
	return resp, nil
}

func (w *wire) last() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.code
}

// recorder tallies the outcomes a generated client decoded typed.
type recorder struct {
	t         *testing.T
	generator string
	wire      *wire
	seen      map[outcome]bool
	bodyless  map[outcome]bool // the declared successes without content
}

func newRecorder(t *testing.T, generator string) *recorder {
	return &recorder{t: t, generator: generator, wire: &wire{}, seen: map[outcome]bool{}}
}

// httpClient is the client the generated clients send through: a plain
// net/http one (no retries, so that a 429 or a 503 is an answer to
// record), over the recording transport.
func (r *recorder) httpClient() *http.Client { return &http.Client{Transport: r.wire} }

// answer returns the status and code of the last answer on the wire, and
// whether the client decoded it (err nil); a failure to decode is
// reported.
func (r *recorder) answer(op string, err error) (status int, code string, decoded bool) {
	r.t.Helper()
	status, code = r.wire.last()
	if err != nil {
		r.t.Errorf("%s: %s: the answer (%d %s) did not decode: %v", r.generator, op, status, code, err)
		return status, code, false
	}
	return status, code, true
}

// ogen records the result of an ogen client's call: err must be nil (ogen
// returns an error for a status or a body the document does not
// declare), res's type names the status it decoded (OK, Created, or
// NNNError, as ogen names a response) and, for an error, its code field,
// of the enum type ogen generated, holds the code the server sent.
func (r *recorder) ogen(op string, res any, err error) {
	r.t.Helper()
	status, code, decoded := r.answer(op, err)
	if !decoded {
		return
	}
	name := reflect.TypeOf(res).Elem().Name()
	typed := 0
	switch {
	case strings.Contains(name, "OK"):
		typed = 200
	case strings.Contains(name, "Created"):
		typed = 201
	default:
		if m := regexp.MustCompile(`([0-9]{3})Error`).FindStringSubmatch(name); m != nil {
			typed, _ = strconv.Atoi(m[1])
		}
	}
	if typed != status {
		r.t.Errorf("%s: %s: the server answered %d, the client decoded %s", r.generator, op, status, name)
		return
	}
	r.record(op, status, code, reflect.ValueOf(res))
}

// oapi records the result of an oapi-codegen client's call (the
// ClientWithResponses method): its JSONnnn field for the status the
// server sent is set, and for an error holds the code typed. A success
// the document declares without content has no such field: its status
// is what the client gets.
func (r *recorder) oapi(op string, res any, err error) {
	r.t.Helper()
	status, code, decoded := r.answer(op, err)
	if !decoded {
		return
	}
	f := reflect.ValueOf(res).Elem().FieldByName("JSON" + strconv.Itoa(status))
	if !f.IsValid() && r.bodyless[outcome{op, status, ""}] {
		r.seen[outcome{op, status, ""}] = true
		return
	}
	if !f.IsValid() || f.IsNil() {
		r.t.Errorf("%s: %s: the server answered %d %s, which the client has no typed value for", r.generator, op, status, code)
		return
	}
	r.record(op, status, code, f)
}

// record checks that the typed value v carries code (an enum-typed field)
// when the answer is an error, and counts the outcome.
func (r *recorder) record(op string, status int, code string, v reflect.Value) {
	r.t.Helper()
	if status >= 400 {
		got, typ := typedCode(v, 0)
		if got != code {
			r.t.Errorf("%s: %s %d: the server sent code %q, the typed value holds %q", r.generator, op, status, code, got)
			return
		}
		if typ == nil || typ.PkgPath() == "" {
			r.t.Errorf("%s: %s %d: the code is a plain %v, not the enum of the declared codes", r.generator, op, status, typ)
			return
		}
	}
	r.seen[outcome{op, status, code}] = true
}

// typedCode finds the error code in a decoded error response: the
// non-empty Code field of the envelope's error (ogen: inside the response
// or its headers wrapper, and inside the active variant of a status whose
// codes have different details; oapi-codegen: through the union's
// ValueByDiscriminator, which decodes the variant the code names).
func typedCode(v reflect.Value, depth int) (string, reflect.Type) {
	if depth > 5 {
		return "", nil
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "", nil
		}
		v = v.Elem()
	}
	if m := v.MethodByName("ValueByDiscriminator"); m.IsValid() {
		out := m.Call(nil)
		if !out[1].IsNil() {
			return "", nil
		}
		return typedCode(out[0], depth+1)
	}
	if v.Kind() != reflect.Struct {
		return "", nil
	}
	if f := v.FieldByName("Code"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
		return f.String(), f.Type()
	}
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if k := v.Field(i).Kind(); k != reflect.Struct && k != reflect.Pointer {
			continue
		}
		if c, typ := typedCode(v.Field(i), depth+1); c != "" {
			return c, typ
		}
	}
	return "", nil
}

// unreachable are the declared responses no request from outside can
// provoke from the example as it runs, each with the reason. Every other
// declared response must be exercised.
var unreachable = map[string]map[string]string{}

// serveHook names the examples run as their TestServeForClients serves
// them, for the declared answers a request alone cannot reach:
// examples/orders' 409 and 503 need a request held in its handler,
// examples/openapi's GET /readyz 503 a user store marked unreachable.
var serveHook = map[string]bool{"orders": true, "openapi": true}

// reachable500 names the operations whose 500 FX_INTERNAL_ERROR a
// request can provoke. Every operation declares the 500 as every fx
// route does (the answer to a handler's bug), and no request to a
// correct handler gets it; examples/hello's GET /panic, which does, is
// left out of its document.
var reachable500 = map[string]bool{}

// checkCoverage fails the test for every declared outcome the recorder
// did not see, other than the unreachable ones.
func checkCoverage(t *testing.T, ex example, declared []outcome, r *recorder) {
	t.Helper()
	skip := unreachable[ex.name]
	exercised, missed := 0, []string{}
	for _, o := range declared {
		_, cannot := skip[o.String()]
		if o.status == 500 && o.code == "FX_INTERNAL_ERROR" && !reachable500[o.op] {
			cannot = true
		}
		switch {
		case r.seen[o]:
			exercised++
			if cannot {
				t.Errorf("%s: %s was exercised: take it off the unreachable ones", r.generator, o)
			}
		case !cannot:
			missed = append(missed, o.String())
		}
	}
	for o := range skip {
		if !slices.ContainsFunc(declared, func(d outcome) bool { return d.String() == o }) {
			t.Errorf("examples/%s does not declare %s, which the test lists as unreachable", ex.name, o)
		}
	}
	if len(missed) > 0 {
		t.Errorf("%s client of examples/%s: %d of %d declared responses exercised; not exercised:\n\t%s",
			r.generator, ex.name, exercised, len(declared), strings.Join(missed, "\n\t"))
	}
	t.Logf("%s client of examples/%s: %d of %d declared responses exercised and decoded typed (%d unreachable)",
		r.generator, ex.name, exercised, len(declared), len(declared)-exercised-len(missed))
}

// TestGeneratedClients runs, for each example, both generated clients
// against a fresh process of it, through every declared response of
// every operation.
func TestGeneratedClients(t *testing.T) {
	drivers := map[string]map[string]func(*testing.T, example, *recorder){
		"orders":  {"ogen": ordersOgen, "oapi-codegen": ordersOapi},
		"openapi": {"ogen": openapiOgen, "oapi-codegen": openapiOapi},
		"hello":   {"ogen": helloOgen, "oapi-codegen": helloOapi},
	}
	docs, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range docs {
		if name := strings.TrimSuffix(filepath.Base(f), ".json"); drivers[name] == nil {
			t.Errorf("%s has clients but no test drives them", f)
		}
	}
	for name, gens := range drivers {
		for gen, drive := range gens {
			t.Run(name+"/"+gen, func(t *testing.T) {
				var ex example
				if serveHook[name] {
					ex = startServeHook(t, name)
				} else {
					ex = startExample(t, name)
				}
				declared, bodyless := declaredOutcomes(t, servedDocument(t, ex))
				r := newRecorder(t, gen)
				r.bodyless = bodyless
				drive(t, ex, r)
				checkCoverage(t, ex, declared, r)
			})
		}
	}
}
