//go:build clients

package live

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
// as they serve: each example runs as its TestServeForClients serves it
// (the App main builds, on 127.0.0.1), and every call goes over the
// loopback through the client's own request encoding and response
// decoding. There a request can be held in the orders handler (its 409
// and 503 need it), the user store marked unreachable (GET /readyz's 503
// needs it), and any request made to fail with the 500 every operation
// declares (fxtest.FaultHeader).

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

// moduleDir is this module's folder (scripts/openapi-clients), the
// parent of this package's: it holds testdata/ and cmd/.
const moduleDir = ".."

// repoRoot is the fx repository this module sits in.
func repoRoot(t testing.TB) string {
	root, err := filepath.Abs(filepath.Join(moduleDir, "..", ".."))
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
// answers a request alone cannot (see that test, and the fault switch of
// fxtest.ServeForClients), driven through example.control.
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
	committed, err := os.ReadFile(filepath.Join(moduleDir, "testdata", ex.name+".json"))
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

// declaredOutcomes lists every response the document declares, each
// (operation, status) pair of it: for a success its status, for an error
// envelope each code its schema allows (the code's enum, or the
// discriminator's mapping of a status shared by codes whose details
// differ). A response or schema given by reference ($ref, such as a
// response shared under components/responses) counts as if written in
// place; an error status whose response is no envelope with codes fails
// the test. bodyless are the successes declared without content; named
// maps "OPERATION SCHEMA" to the status whose body is the named schema
// SCHEMA (components/schemas), as ogen names the type it decodes.
func declaredOutcomes(t testing.TB, doc map[string]any) (out []outcome, bodyless map[outcome]bool, named map[string]int) {
	t.Helper()
	named = map[string]int{}
	resolve := func(s any) map[string]any {
		m, _ := s.(map[string]any)
		for hops := 0; hops < 8; hops++ {
			ref, ok := m["$ref"].(string)
			if !ok {
				return m
			}
			if !strings.HasPrefix(ref, "#/") {
				t.Fatalf("a reference out of the document: %q", ref)
			}
			var v any = doc
			for _, k := range strings.Split(ref[2:], "/") {
				v = dig(v, strings.NewReplacer("~1", "/", "~0", "~").Replace(k))
			}
			if m, _ = v.(map[string]any); m == nil {
				t.Fatalf("the reference %q names nothing", ref)
			}
		}
		t.Fatalf("references nested more than 8 deep")
		return nil
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
				r := resolve(r)
				if ref, ok := dig(r, "content", "application/json", "schema", "$ref").(string); ok {
					named[id+" "+strings.TrimPrefix(ref, "#/components/schemas/")] = status
				}
				schema := resolve(dig(r, "content", "application/json", "schema"))
				env := resolve(dig(schema, "properties", "error"))
				if env == nil && status >= 400 {
					t.Fatalf("%s %d: an error response with no envelope", id, status)
				}
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
	return out, bodyless, named
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

// wire is an http.RoundTripper that keeps the status, the envelope's
// code and its error object of the last answer, for the recorder to hold
// the typed value against, and applies the request edit a call carries
// in its context (see withEdit): how a test sends what a generated
// client, true to the document, would not (no credentials, no required
// header, a body over the server's limit, the fault switch).
type wire struct {
	mu     sync.Mutex
	status int
	code   string
	error  json.RawMessage // the envelope's error object, as sent
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
		Error json.RawMessage `json:"error"`
	}
	var code struct{ Code string }
	if json.Unmarshal(body, &env) == nil {
		json.Unmarshal(env.Error, &code)
	}
	w.mu.Lock()
	w.status, w.code, w.error = resp.StatusCode, code.Code, env.Error
	w.mu.Unlock()
	return resp, nil
}

func (w *wire) last() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.code
}

func (w *wire) lastError() json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.error
}

// recorder tallies the outcomes a generated client decoded typed.
type recorder struct {
	t         *testing.T
	generator string
	example   string // the example's name
	wire      *wire
	seen      map[outcome]bool
	bodyless  map[outcome]bool // the declared successes without content
	named     map[string]int   // "OPERATION SCHEMA": the status of that body (declaredOutcomes)
}

func newRecorder(t *testing.T, example, generator string) *recorder {
	return &recorder{t: t, generator: generator, example: example, wire: &wire{}, seen: map[outcome]bool{}}
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
// declare), res's type names the status it decoded (the schema of that
// status's body, such as HeadersTooLargeError for a shared response; or
// OK, Created, NNNError, as ogen names an inline one, with a Headers
// suffix where the response declares headers) and, for an error, its code field,
// of the enum type ogen generated, holds the code the server sent.
func (r *recorder) ogen(op string, res any, err error) {
	r.t.Helper()
	status, code, decoded := r.answer(op, err)
	if !decoded {
		return
	}
	name := reflect.TypeOf(res).Elem().Name()
	typed, ok := r.named[op+" "+strings.TrimSuffix(name, "Headers")]
	switch {
	case ok:
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

// record checks, when the answer is an error, that the typed value v
// holds it whole: its code in an enum-typed field, and the error object
// the typed value encodes back to (code, message and details, as the
// client typed them) equal to the one the server sent. It counts the
// outcome.
func (r *recorder) record(op string, status int, code string, v reflect.Value) {
	r.t.Helper()
	if status >= 400 {
		e := typedError(v, 0)
		if !e.IsValid() {
			r.t.Errorf("%s: %s %d: the server sent code %q, the typed value holds no error with a code", r.generator, op, status, code)
			return
		}
		if got := e.FieldByName("Code"); got.String() != code {
			r.t.Errorf("%s: %s %d: the server sent code %q, the typed value holds %q", r.generator, op, status, code, got.String())
			return
		} else if got.Type().PkgPath() == "" {
			r.t.Errorf("%s: %s %d: the code is a plain %v, not the enum of the declared codes", r.generator, op, status, got.Type())
			return
		}
		if msg := e.FieldByName("Message"); !msg.IsValid() || msg.Kind() != reflect.String || msg.String() == "" {
			r.t.Errorf("%s: %s %d %s: the typed error has no message", r.generator, op, status, code)
			return
		}
		if diff := sameJSON(r.wire.lastError(), e); diff != "" {
			r.t.Errorf("%s: %s %d %s: the typed error is not what the server sent: %s", r.generator, op, status, code, diff)
			return
		}
	}
	r.seen[outcome{op, status, code}] = true
}

// sameJSON reports how the typed error e, encoded as its client encodes
// it (ogen's generated MarshalJSON, encoding/json's tags for
// oapi-codegen), differs from the error object sent; "" if it does not:
// the client kept every field the server sent (the code, the message,
// the details, typed per code) and added none.
func sameJSON(sent json.RawMessage, e reflect.Value) string {
	p := reflect.New(e.Type()) // ogen's MarshalJSON has a pointer receiver
	p.Elem().Set(e)
	typed, err := json.Marshal(p.Interface())
	if err != nil {
		return fmt.Sprintf("encoding the typed value: %v", err)
	}
	var a, b map[string]any
	if err := json.Unmarshal(sent, &a); err != nil {
		return fmt.Sprintf("the sent error %s: %v", sent, err)
	}
	if err := json.Unmarshal(typed, &b); err != nil {
		return fmt.Sprintf("the typed value's JSON %s: %v", typed, err)
	}
	if reflect.DeepEqual(a, b) {
		return ""
	}
	return fmt.Sprintf("sent %s, typed %s", sent, typed)
}

// typedError finds the envelope's error in a decoded error response: the
// struct with a non-empty Code field (ogen: inside the response or its
// headers wrapper, and inside the active variant of a status whose codes
// have different details; oapi-codegen: through the union's
// ValueByDiscriminator, which decodes the variant the code names). It
// returns the zero Value if there is none.
func typedError(v reflect.Value, depth int) reflect.Value {
	if depth > 5 {
		return reflect.Value{}
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}
		}
		v = v.Elem()
	}
	if m := v.MethodByName("ValueByDiscriminator"); m.IsValid() {
		out := m.Call(nil)
		if !out[1].IsNil() {
			return reflect.Value{}
		}
		return typedError(out[0], depth+1)
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	if f := v.FieldByName("Code"); f.IsValid() && f.Kind() == reflect.String && f.String() != "" {
		return v
	}
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if k := v.Field(i).Kind(); k != reflect.Struct && k != reflect.Pointer {
			continue
		}
		if e := typedError(v.Field(i), depth+1); e.IsValid() {
			return e
		}
	}
	return reflect.Value{}
}

// missing lists the declared outcomes not in seen: every one must be
// exercised, none is excused (the 500 every operation declares is
// reached through the fault switch, fxtest.FaultHeader).
func missing(declared []outcome, seen map[outcome]bool) []string {
	var out []string
	for _, o := range declared {
		if !seen[o] {
			out = append(out, o.String())
		}
	}
	return out
}

// checkCoverage fails the test for every declared outcome the recorder
// did not see.
func checkCoverage(t *testing.T, ex example, declared []outcome, r *recorder) {
	t.Helper()
	if missed := missing(declared, r.seen); len(missed) > 0 {
		t.Errorf("%s client of examples/%s: %d of %d declared responses exercised; not exercised:\n\t%s",
			r.generator, ex.name, len(declared)-len(missed), len(declared), strings.Join(missed, "\n\t"))
		return
	}
	t.Logf("%s client of examples/%s: all %d declared responses exercised and decoded typed", r.generator, ex.name, len(declared))
}

// TestGeneratedClients runs, for each example, both generated clients
// against a fresh process of it, through every declared response of
// every operation: each (operation, status, code) the served document
// declares (declaredOutcomes) must have been answered and decoded typed
// by each client, none excused.
func TestGeneratedClients(t *testing.T) {
	drivers := map[string]map[string]func(*testing.T, example, *recorder){
		"orders":  {"ogen": ordersOgen, "oapi-codegen": ordersOapi},
		"openapi": {"ogen": openapiOgen, "oapi-codegen": openapiOapi},
		"hello":   {"ogen": helloOgen, "oapi-codegen": helloOapi},
	}
	docs, err := filepath.Glob(filepath.Join(moduleDir, "testdata", "*.json"))
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
				ex := startServeHook(t, name)
				declared, bodyless, named := declaredOutcomes(t, servedDocument(t, ex))
				r := newRecorder(t, name, gen)
				r.bodyless, r.named = bodyless, named
				drive(t, ex, r)
				checkCoverage(t, ex, declared, r)
			})
		}
	}
}

// TestDeclaredOutcomes checks the enumeration the coverage check counts
// on: every (operation, status) pair of a document, with each code of an
// error, whether the response is written in place or shared by reference
// (components/responses, as a response every operation declares is), and
// that an outcome no client saw is named missing.
func TestDeclaredOutcomes(t *testing.T) {
	const doc = `{
	  "paths": {"/things/{id}": {
	    "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
	    "get": {"operationId": "getThing", "responses": {
	      "200": {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}},
	      "422": {"description": "Unprocessable", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing422"}}}},
	      "431": {"$ref": "#/components/responses/HeadersTooLarge"},
	      "500": {"description": "Internal", "content": {"application/json": {"schema": {"type": "object", "properties": {
	        "error": {"type": "object", "properties": {"code": {"type": "string", "enum": ["FX_INTERNAL_ERROR"]}}}}}}}}}},
	    "delete": {"operationId": "deleteThing", "responses": {"204": {"description": "No Content"}}}}},
	  "components": {
	    "responses": {"HeadersTooLarge": {"description": "Too large", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HeadersTooLargeError"}}}}},
	    "schemas": {
	      "HeadersTooLargeError": {"type": "object", "properties": {"error": {"type": "object", "properties": {"code": {"type": "string", "enum": ["FX_HEADERS_TOO_LARGE"]}}}}},
	      "Thing422": {"type": "object", "properties": {"error": {"discriminator": {"propertyName": "code", "mapping": {
	        "FX_VALIDATION_ERROR": "#/components/schemas/A", "FX_IDEMPOTENCY_KEY_REUSED": "#/components/schemas/B"}}}}}}}}`
	var d map[string]any
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	declared, bodyless, named := declaredOutcomes(t, d)
	var got []string
	for _, o := range declared {
		got = append(got, o.String())
	}
	want := []string{
		"deleteThing 204",
		"getThing 200",
		"getThing 422 FX_IDEMPOTENCY_KEY_REUSED",
		"getThing 422 FX_VALIDATION_ERROR",
		"getThing 431 FX_HEADERS_TOO_LARGE",
		"getThing 500 FX_INTERNAL_ERROR",
	}
	if !slices.Equal(got, want) {
		t.Errorf("declared outcomes:\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if !bodyless[outcome{"deleteThing", 204, ""}] || len(bodyless) != 1 {
		t.Errorf("bodyless = %v, want deleteThing 204 alone", bodyless)
	}
	if want := map[string]int{"getThing Thing422": 422, "getThing HeadersTooLargeError": 431}; !reflect.DeepEqual(named, want) {
		t.Errorf("named = %v, want %v", named, want)
	}
	seen := map[outcome]bool{{"getThing", 200, ""}: true, {"getThing", 422, "FX_VALIDATION_ERROR"}: true, {"deleteThing", 204, ""}: true}
	if m := missing(declared, seen); !slices.Equal(m, []string{"getThing 422 FX_IDEMPOTENCY_KEY_REUSED", "getThing 431 FX_HEADERS_TOO_LARGE", "getThing 500 FX_INTERNAL_ERROR"}) {
		t.Errorf("missing = %q", m)
	}
}
