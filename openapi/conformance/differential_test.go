package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
)

// TestExamplesSchemaAgreesWithServer is a differential test of the
// examples that serve a document (examples/orders, examples/openapi,
// examples/hello): each runs as its own process, and one set of requests
// generated from the document it serves (for every operation: a valid
// request, then each body field and parameter removed, null, of the
// wrong type, at and past each bound, outside its enum or format) is
// both validated against the document and sent to the server. For every
// request the document accepts it exactly when the server does (the
// server refuses an input with 400 or 422): a field the server requires
// is required in the document, a bound the server checks is in the
// schema, and nothing the document refuses is accepted. Then every
// operation gets a request with headers over the server's limit: each
// declares 431 FX_HEADERS_TOO_LARGE and is answered so, conforming to the
// document (see TestHeadersTooLargeOnEveryOperation).
func TestExamplesSchemaAgreesWithServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the examples")
	}
	for _, ex := range differentialExamples {
		t.Run(ex.name, func(t *testing.T) {
			base := startExample(t, "github.com/fxhq/fx/examples/"+ex.name)
			spec := fetch(t, base+"/openapi.json")
			doc, err := libopenapi.NewDocument(spec)
			if err != nil {
				t.Fatal(err)
			}
			// format is an assertion here (email, uuid, ...): the server
			// checks it, and a client reading the document is told to
			v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
			if len(errs) > 0 {
				t.Fatalf("validator: %v", errs)
			}
			var raw map[string]any
			if err := json.Unmarshal(spec, &raw); err != nil {
				t.Fatal(err)
			}
			probes := generateProbes(t, raw, ex)
			agreed := 0
			for i, p := range probes {
				docOK, verrs := v.ValidateHttpRequest(p.request(t, base, i))
				resp, err := http.DefaultClient.Do(p.request(t, base, i))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case 401, 403, 429, 500, 503:
					t.Fatalf("%s: %d %s (the probe itself is broken)", p, resp.StatusCode, body)
				}
				serverOK := resp.StatusCode != 400 && resp.StatusCode != 422
				if docOK != serverOK {
					var why []string
					for _, e := range verrs {
						why = append(why, e.Message+": "+e.Reason)
					}
					t.Errorf("%s: the document accepts it: %v, the server: %v (%d %.200s) %v",
						p, docOK, serverOK, resp.StatusCode, body, why)
					continue
				}
				agreed++
			}
			t.Logf("%d of %d generated requests: the document and the server agree", agreed, len(probes))
			if len(probes) < ex.atLeast {
				t.Errorf("%d requests generated, want at least %d", len(probes), ex.atLeast)
			}
			// what the server answers before any operation: every one
			// declares it, and the answer conforms
			n := headersTooLargeEverywhere(t, raw, v, base, ex.headers, http.DefaultClient.Do)
			t.Logf("%d operations: 431 FX_HEADERS_TOO_LARGE declared and answered", n)
		})
	}
}

// differentialExample is an example the differential test runs, with
// what a document cannot say: the credentials its guarded routes take,
// the values of headers and path parameters that name something that
// exists (a tenant, an order), and a valid body per operation where the
// schema's examples do not make one.
type differentialExample struct {
	name    string
	headers map[string]string // sent with every request (credentials)
	values  map[string]string // "METHOD /path name" or "name": a valid parameter value
	bodies  map[string]string // "METHOD /path": a valid JSON body
	atLeast int               // the generator must produce at least this many requests
}

var differentialExamples = []differentialExample{
	{
		name:    "orders",
		headers: map[string]string{"X-API-Key": "ak_demo_acme_0123456789"},
		values:  map[string]string{"X-Tenant-ID": "acme", "GET /orders/{id} id": "ord_1"},
		atLeast: 80,
	},
	{
		name:    "openapi",
		headers: map[string]string{"X-API-Key": "ak_demo_admin_0123456789"},
		values:  map[string]string{"X-Tenant-ID": "acme", "GET /users/{id} id": "u1"},
		bodies:  map[string]string{"POST /users": `{"name":"Ada","email":"ada@example.com"}`},
		atLeast: 15,
	},
	{
		name:    "hello",
		headers: map[string]string{"X-API-Key": "fx-demo-key-not-a-secret"},
		values:  map[string]string{"GET /users/{id} id": "7"},
		bodies:  map[string]string{"POST /orders": `{"customer":"Ada","items":[{"sku":"A-1","qty":2}]}`},
		atLeast: 30,
	},
}

// probe is one generated request.
type probe struct {
	method, path string            // path: the document's template
	params       map[string]string // "in name" → value
	body         string            // "" for none
	what         string            // what it varies
}

func (p probe) String() string {
	return fmt.Sprintf("%s %s [%s] %.160s", p.method, p.path, p.what, p.body)
}

// request builds p against base; i makes its Idempotency-Key unique.
func (p probe) request(t *testing.T, base string, i int) *http.Request {
	t.Helper()
	target := p.path
	q := url.Values{}
	hdr := http.Header{}
	for k, val := range p.params {
		in, name, _ := strings.Cut(k, " ")
		switch in {
		case "path":
			target = strings.ReplaceAll(target, "{"+name+"}", url.PathEscape(val))
		case "query":
			q.Set(name, val)
		case "header":
			if val == idempotencyKey {
				val = fmt.Sprintf("diff-%d-%d", os.Getpid(), i)
			}
			hdr.Set(name, val)
		}
	}
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var body io.Reader
	if p.body != "" {
		body = strings.NewReader(p.body)
	}
	r, err := http.NewRequest(p.method, base+target, body)
	if err != nil {
		t.Fatal(err)
	}
	r.Header = hdr
	if p.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// idempotencyKey stands for a fresh key in a probe's parameters.
const idempotencyKey = "\x00fresh"

// absent marks a removed field or parameter.
var absent = &struct{ absent bool }{true}

// generateProbes makes the requests of every operation of doc that takes
// an input (parameters or a body): a valid one, then each variant of each
// input.
func generateProbes(t *testing.T, doc map[string]any, ex differentialExample) []probe {
	t.Helper()
	g := schemaGen{doc: doc}
	var out []probe
	paths, _ := doc["paths"].(map[string]any)
	for _, path := range sortedKeys(paths) {
		ops := paths[path].(map[string]any)
		for _, method := range sortedKeys(ops) {
			op, ok := ops[method].(map[string]any)
			if !ok {
				continue
			}
			if !succeeds(op) {
				continue // it only fails (a demo's panic): there is no valid request
			}
			M := strings.ToUpper(method)
			valid := probe{method: M, path: path, params: map[string]string{}, what: "valid"}
			for k, v := range ex.headers {
				valid.params["header "+k] = v
			}
			var params []map[string]any
			list, _ := op["parameters"].([]any)
			for _, p := range list {
				params = append(params, g.resolve(p.(map[string]any)))
			}
			for _, p := range params {
				name, in := p["name"].(string), p["in"].(string)
				if name == "Idempotency-Key" {
					valid.params[in+" "+name] = idempotencyKey
					continue
				}
				val, ok := ex.values[M+" "+path+" "+name]
				if !ok {
					val, ok = ex.values[name]
				}
				if !ok && p["required"] == true {
					val, ok = g.paramValue(g.resolve(p["schema"].(map[string]any))), true
				}
				if ok {
					valid.params[in+" "+name] = val
				}
			}
			var bodySchema map[string]any
			if rb, ok := op["requestBody"].(map[string]any); ok {
				rb = g.resolve(rb)
				content, _ := rb["content"].(map[string]any)
				if mt, ok := content["application/json"].(map[string]any); ok {
					bodySchema = g.resolve(mt["schema"].(map[string]any))
				}
			}
			if len(params) == 0 && bodySchema == nil {
				continue
			}
			if bodySchema != nil {
				valid.body = ex.bodies[M+" "+path]
				if valid.body == "" {
					b, err := json.Marshal(g.valid(bodySchema))
					if err != nil {
						t.Fatal(err)
					}
					valid.body = string(b)
				}
			}
			out = append(out, valid)
			// each parameter: absent, then its variants
			for _, p := range params {
				name, in := p["name"].(string), p["in"].(string)
				key := in + " " + name
				if in != "path" { // a path parameter cannot be absent
					out = append(out, valid.with(key, "", true, "no "+name))
				}
				if in == "header" {
					continue // a header's value is a credential, a tenant or a key: absent is its variant
				}
				s := g.resolve(p["schema"].(map[string]any))
				for _, v := range g.variants(s) {
					if v == absent || v == nil {
						continue
					}
					str, ok := v.(string)
					if !ok {
						b, _ := json.Marshal(v)
						str = string(b)
					}
					if in == "path" && str == "" {
						continue
					}
					out = append(out, valid.with(key, str, false, name+"="+str))
				}
			}
			// each body field: its variants, at every depth
			if bodySchema != nil {
				var root any
				if err := json.Unmarshal([]byte(valid.body), &root); err != nil {
					t.Fatal(err)
				}
				g.walk(bodySchema, root, nil, func(at []any, v any) {
					b := replaced(root, at, v)
					out = append(out, probe{method: M, path: path, params: valid.params, body: b, what: fmt.Sprintf("body %v", at)})
				})
				for _, b := range []string{`[]`, `"x"`, `null`, `1`} {
					out = append(out, probe{method: M, path: path, params: valid.params, body: b, what: "body"})
				}
			}
		}
	}
	return out
}

// succeeds reports whether op documents a 2xx response.
func succeeds(op map[string]any) bool {
	responses, _ := op["responses"].(map[string]any)
	for status := range responses {
		if strings.HasPrefix(status, "2") {
			return true
		}
	}
	return false
}

// with returns p with the parameter key set to v (or removed).
func (p probe) with(key, v string, remove bool, what string) probe {
	params := maps.Clone(p.params)
	if remove {
		delete(params, key)
	} else {
		params[key] = v
	}
	p.params, p.what = params, what
	return p
}

// schemaGen makes values from the schemas of one document.
type schemaGen struct{ doc map[string]any }

// resolve follows $ref (within the document).
func (g schemaGen) resolve(s map[string]any) map[string]any {
	for i := 0; i < 8; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		var cur any = g.doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		s = cur.(map[string]any)
	}
	return s
}

func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				return x.(string)
			}
		}
	}
	return ""
}

func num(s map[string]any, k string) (float64, bool) {
	f, ok := s[k].(float64)
	return f, ok
}

// valid is a value s accepts: its example, its first enum value, or one
// built from its type and bounds.
func (g schemaGen) valid(s map[string]any) any {
	s = g.resolve(s)
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	switch typeOf(s) {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for k, p := range props {
			out[k] = g.valid(p.(map[string]any))
		}
		return out
	case "array":
		n := 1
		if m, ok := num(s, "minItems"); ok && m > 1 {
			n = int(m)
		}
		items, _ := s["items"].(map[string]any)
		out := make([]any, n)
		for i := range out {
			out[i] = g.valid(items)
		}
		return out
	case "integer", "number":
		if m, ok := num(s, "minimum"); ok {
			return m
		}
		if m, ok := num(s, "maximum"); ok && m < 1 {
			return m
		}
		return 1
	case "boolean":
		return true
	}
	n := 3
	if m, ok := num(s, "minLength"); ok && m > 3 {
		n = int(m)
	}
	return strings.Repeat("a", n)
}

// paramValue is a valid parameter value as it is sent (a string).
func (g schemaGen) paramValue(s map[string]any) string {
	v := g.valid(s)
	if str, ok := v.(string); ok {
		return str
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// variants are values at and past each bound of s, of other types, null
// and absent: what the document and the server must agree on.
func (g schemaGen) variants(s map[string]any) []any {
	s = g.resolve(s)
	out := []any{absent, nil}
	if e, ok := s["enum"].([]any); ok {
		out = append(out, "zzz", "")
		out = append(out, e...)
	}
	switch typeOf(s) {
	case "string":
		out = append(out, 12345, true, "")
		if m, ok := num(s, "minLength"); ok && m > 0 {
			out = append(out, strings.Repeat("A", int(m)-1), strings.Repeat("A", int(m)))
		}
		if m, ok := num(s, "maxLength"); ok {
			out = append(out, strings.Repeat("A", int(m)), strings.Repeat("A", int(m)+1))
		}
		if _, ok := s["pattern"]; ok {
			out = append(out, "abc", "A-1", "!!")
		}
		if _, ok := s["format"]; ok {
			out = append(out, "nope", "ada@example.com")
		}
		if e, ok := s["else"].(map[string]any); ok && e["format"] != nil {
			out = append(out, "nope", "ada@example.com")
		}
	case "integer", "number":
		out = append(out, "2", 2.5, true, 0, -1)
		if m, ok := num(s, "minimum"); ok {
			out = append(out, m-1, m)
		}
		if m, ok := num(s, "maximum"); ok {
			out = append(out, m, m+1)
		}
	case "boolean":
		// in a query: strconv.ParseBool's spellings and others
		out = append(out, "maybe", 1, false, 0, "t", "TRUE", "False", "yes", "tRUE")
	case "array":
		out = append(out, "x", map[string]any{}, []any{})
		items, _ := s["items"].(map[string]any)
		if m, ok := num(s, "maxItems"); ok && m < 1000 {
			many := make([]any, int(m)+1)
			for i := range many {
				many[i] = g.valid(items)
			}
			out = append(out, many, many[1:])
		}
	case "object":
		out = append(out, "x", []any{})
	}
	return out
}

// walk calls f with each variant of each value under v (s its schema)
// and at (the path to it).
func (g schemaGen) walk(s map[string]any, v any, at []any, f func(at []any, v any)) {
	s = g.resolve(s)
	switch typeOf(s) {
	case "object":
		props, _ := s["properties"].(map[string]any)
		obj, _ := v.(map[string]any)
		for _, k := range sortedKeys(props) {
			p := g.resolve(props[k].(map[string]any))
			here := append(slices.Clone(at), k)
			for _, x := range g.variants(p) {
				f(here, x)
			}
			if sub, ok := obj[k]; ok {
				g.walk(p, sub, here, f)
			}
		}
	case "array":
		arr, _ := v.([]any)
		items, _ := s["items"].(map[string]any)
		if len(arr) > 0 && items != nil {
			g.walk(items, arr[0], append(slices.Clone(at), 0), f)
		}
	}
}

// replaced is root as JSON with the value at path set to v (removed when
// v is absent).
func replaced(root any, path []any, v any) string {
	var cp any
	b, _ := json.Marshal(root)
	json.Unmarshal(b, &cp)
	if len(path) == 0 {
		cp = v
	} else {
		cur := cp
		for _, k := range path[:len(path)-1] {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[k.(string)]
			case []any:
				cur = c[k.(int)]
			}
		}
		switch c := cur.(type) {
		case map[string]any:
			if v == absent {
				delete(c, path[len(path)-1].(string))
			} else {
				c[path[len(path)-1].(string)] = v
			}
		case []any:
			c[path[len(path)-1].(int)] = v
		}
	}
	b, _ = json.Marshal(cp)
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// startExample builds the example command pkg, runs it on a free loopback
// port (-addr or ADDR) and returns its base URL (read from its log); the process is stopped when t ends.
func startExample(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "example")
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "ADDR=127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		// "orders on http://ADDR", or fx's own "listening addr=ADDR"
		// (text) or "addr":"ADDR" (JSON)
		re := regexp.MustCompile(`(?:http://|addr=|"addr":")(127\.0\.0\.1:[0-9]+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- "http://" + m[1]:
				default:
				}
			}
		}
	}()
	select {
	case base := <-found:
		return base
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not say where it listens", pkg)
	}
	return ""
}

func fetch(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
	}
	return b
}
