package conformance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
)

// TestOrdersSchemaAgreesWithServer is a differential test of
// examples/orders: one set of generated requests (a valid order, then
// each field removed, at and past each bound, of the wrong type; the
// query and path parameters likewise) is sent to the running example and
// validated against the document it serves. For every request, the
// document accepts it exactly when the server does (the server refuses
// with 422): a field the server requires is required in the document, a
// bound the server checks is in the schema, and nothing the document
// refuses is accepted.
func TestOrdersSchemaAgreesWithServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs examples/orders")
	}
	base := startExample(t, "github.com/fxhq/fx/examples/orders")
	spec := fetch(t, base+"/openapi.json")
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	// format is an assertion here (email, uuid, ...): the server checks
	// it, and a client reading the document is told to
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions())
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}

	const line = `{"sku":"BOOK-1","qty":2}`
	order := func(customer, email, lines string) string {
		var parts []string
		for _, kv := range [][2]string{{"customer", customer}, {"email", email}, {"lines", lines}} {
			if kv[1] != "-" {
				parts = append(parts, `"`+kv[0]+`":`+kv[1])
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	lineWith := func(sku, qty string) string {
		var parts []string
		if sku != "-" {
			parts = append(parts, `"sku":`+sku)
		}
		if qty != "-" {
			parts = append(parts, `"qty":`+qty)
		}
		return "[{" + strings.Join(parts, ",") + "}]"
	}
	many := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat(line+",", n), ",") + "]" }
	str := func(n int, c string) string { return `"` + strings.Repeat(c, n) + `"` }
	bodies := []string{
		order(`"Ada"`, `"ada@example.com"`, "["+line+"]"),
		order("-", `"ada@example.com"`, "["+line+"]"),
		order(`"Ada"`, "-", "["+line+"]"),
		order(`"Ada"`, `"ada@example.com"`, "-"),
		order(`""`, "-", "["+line+"]"),
		order(str(80, "a"), "-", "["+line+"]"),
		order(str(81, "a"), "-", "["+line+"]"),
		order(`1`, "-", "["+line+"]"),
		order(`null`, "-", "["+line+"]"),
		order(`"Ada"`, `"nope"`, "["+line+"]"),
		order(`"Ada"`, `""`, "["+line+"]"),
		order(`"Ada"`, "-", "[]"),
		order(`"Ada"`, "-", many(50)),
		order(`"Ada"`, "-", many(51)),
		order(`"Ada"`, "-", "null"),
		order(`"Ada"`, "-", `"x"`),
		order(`"Ada"`, "-", lineWith("-", "2")),
		order(`"Ada"`, "-", lineWith(`"BOOK-1"`, "-")),
		order(`"Ada"`, "-", lineWith(`"AB"`, "2")),
		order(`"Ada"`, "-", lineWith(`"ABC"`, "2")),
		order(`"Ada"`, "-", lineWith(`"abc"`, "2")),
		order(`"Ada"`, "-", lineWith(str(32, "A"), "2")),
		order(`"Ada"`, "-", lineWith(str(33, "A"), "2")),
		order(`"Ada"`, "-", lineWith(`"BOOK-1"`, "0")),
		order(`"Ada"`, "-", lineWith(`"BOOK-1"`, "1")),
		order(`"Ada"`, "-", lineWith(`"BOOK-1"`, "100")),
		order(`"Ada"`, "-", lineWith(`"BOOK-1"`, "101")),
		order(`"Ada"`, "-", lineWith(`"BOOK-1"`, "2.5")),
		order(`"Ada"`, "-", lineWith(`"BOOK-1"`, `"2"`)),
		order(`"Ada"`, "-", lineWith(`"BOOK-1"`, "-1")),
		`[]`, `"order"`, `null`,
	}
	type probe struct{ method, target, body string }
	var probes []probe
	for _, b := range bodies {
		probes = append(probes, probe{"POST", "/orders", b})
	}
	for _, q := range []string{"", "status=open", "status=lost", "limit=1", "limit=100", "limit=0", "limit=101", "limit=ten",
		"customer=Ada", "customer=" + strings.Repeat("a", 81)} {
		probes = append(probes, probe{"GET", "/orders?" + q, ""})
	}
	for _, id := range []string{"ord_1", "ord_x", "x", "ord_1234567890123"} {
		probes = append(probes, probe{"GET", "/orders/" + id, ""})
	}

	newReq := func(p probe, i int) *http.Request {
		var body io.Reader
		if p.body != "" {
			body = strings.NewReader(p.body)
		}
		r, err := http.NewRequest(p.method, base+p.target, body)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("X-API-Key", "ak_demo_acme_0123456789")
		r.Header.Set("X-Tenant-ID", "acme")
		if p.method == "POST" {
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Idempotency-Key", fmt.Sprintf("diff-%d-%d", os.Getpid(), i))
		}
		return r
	}
	agreed := 0
	for i, p := range probes {
		docOK, verrs := v.ValidateHttpRequest(newReq(p, i))
		resp, err := http.DefaultClient.Do(newReq(p, i))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 || resp.StatusCode == 401 || resp.StatusCode == 403 || resp.StatusCode == 429 {
			t.Fatalf("%s %s: %d %s (the probe itself is broken)", p.method, p.target, resp.StatusCode, raw)
		}
		serverOK := resp.StatusCode != 422
		if known := knownDisagreements[p.body]; known != "" && docOK != serverOK {
			t.Logf("known disagreement (%s): %s %s %s", known, p.method, p.target, p.body)
			delete(knownDisagreements, p.body)
			continue
		}
		if docOK != serverOK {
			var why []string
			for _, e := range verrs {
				why = append(why, e.Message+": "+e.Reason)
			}
			t.Errorf("%s %s %.120s: the document accepts it: %v, the server: %v (%d %.200s) %v",
				p.method, p.target, p.body, docOK, serverOK, resp.StatusCode, raw, why)
			continue
		}
		agreed++
	}
	t.Logf("%d of %d generated requests: the document and the server agree", agreed, len(probes))
	for body, why := range knownDisagreements {
		t.Errorf("the known disagreement on %s (%s) is gone: remove it from knownDisagreements", body, why)
	}
}

// knownDisagreements are the requests (by body) on which the document and
// the server are known to disagree, each with the reason; the test fails
// when one of them stops disagreeing, so the list only shrinks.
var knownDisagreements = map[string]string{
}

// startExample builds the example command pkg, runs it on a free loopback
// port and returns its base URL; the process is stopped when t ends.
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
		re := regexp.MustCompile(`http://(127\.0\.0\.1:[0-9]+)`)
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
