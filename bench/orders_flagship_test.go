package bench

import (
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// flagStep is one request of the flagship walk and the status and error
// code (or, for a success, the Location) every implementation answers;
// examples/orders/main_test.go walks the fx service the same way.
type flagStep struct {
	method, path, apiKey, tenant, idemKey, body string
	status                                      int
	code                                        string // error code, or the Location of a 201
	issues                                      []string
}

const flagBook = `{"customer":"Ada Lovelace","email":"ada@example.com","lines":[{"sku":"BOOK-1","qty":2}]}`

var flagSteps = []flagStep{
	{"POST", "/orders", "ak_acme_0123456789", "acme", "i-1", flagBook, 201, "/orders/ord_1", nil},
	{"POST", "/orders", "ak_acme_0123456789", "acme", "i-1", flagBook, 201, "/orders/ord_1", nil},
	{"POST", "/orders", "ak_acme_0123456789", "acme", "i-1", `{"customer":"Bob","lines":[{"sku":"BOOK-1","qty":1}]}`, 422, "FX_IDEMPOTENCY_KEY_REUSED", nil},
	{"POST", "/orders", "ak_acme_0123456789", "acme", "", flagBook, 400, "FX_IDEMPOTENCY_KEY_REQUIRED", nil},
	{"POST", "/orders", "ak_acme_0123456789", "acme", "i-2", `{"customer":"","email":"nope","lines":[{"sku":"b!","qty":0},{"sku":"CUP-1","qty":101}]}`, 422, "FX_VALIDATION_ERROR",
		[]string{"body customer", "body email", "body lines.0.qty", "body lines.0.sku", "body lines.1.qty"}},
	{"GET", "/orders/ord_1", "ak_acme_0123456789", "acme", "", "", 200, "", nil},
	{"GET", "/orders/ord_999", "ak_acme_0123456789", "acme", "", "", 404, "APP_ORDER_NOT_FOUND", nil},
	{"GET", "/orders/42", "ak_acme_0123456789", "acme", "", "", 422, "FX_VALIDATION_ERROR", []string{"path id"}},
	{"GET", "/orders?status=open&limit=1", "ak_acme_0123456789", "acme", "", "", 200, "", nil},
	{"GET", "/orders?status=lost&limit=500", "ak_acme_0123456789", "acme", "", "", 422, "FX_VALIDATION_ERROR", []string{"query limit", "query status"}},
	{"GET", "/orders", "", "acme", "", "", 401, "FX_UNAUTHENTICATED", nil},
	{"GET", "/orders", "ak_acme_0123456789", "", "", "", 400, "FX_TENANT_REQUIRED", nil},
	{"GET", "/orders", "ak_acme_0123456789", "initech", "", "", 403, "FX_FORBIDDEN", nil},
}

// flagLimit is the tenants' rate limit in the walk (a minute's requests):
// more than acme sends in flagSteps; globex then spends it all.
const flagLimit = 20

// flagKnown are steps a peer answers otherwise, and why.
var flagKnown = map[string]string{
	"fiber-v3/2": "Fiber's idempotency middleware does not compare the request: a reused key replays the first response",
}

// TestFlagshipPeers walks the fx, Huma and Fiber v3 flagships over loopback
// with the steps examples/orders answers (statuses, codes, Location and
// issue sets agree), then spends globex's rate limit: its next request is
// 429 and acme's are not.
func TestFlagshipPeers(t *testing.T) {
	keys := map[string]string{"ak_acme_0123456789": "acme", "ak_globex_0123456789": "globex"}
	for _, fw := range FlagshipFrameworks {
		t.Run(fw.Name, func(t *testing.T) {
			base := serveLoopback(t, fw.New(keys, flagLimit))
			for i, st := range flagSteps {
				if why, ok := flagKnown[fw.Name+"/"+strconv.Itoa(i)]; ok {
					t.Logf("step %d skipped: %s", i, why)
					continue
				}
				checkFlagStep(t, base, i, st)
			}
			globex := flagStep{"GET", "/orders", "ak_globex_0123456789", "globex", "", "", 200, "", nil}
			for range flagLimit {
				checkFlagStep(t, base, len(flagSteps), globex)
			}
			globex.status, globex.code = 429, "FX_RATE_LIMITED"
			checkFlagStep(t, base, len(flagSteps)+1, globex)
			checkFlagStep(t, base, len(flagSteps)+2, flagStep{"GET", "/orders/ord_1", "ak_acme_0123456789", "acme", "", "", 200, "", nil})
		})
	}
}

// serveLoopback serves impl on a loopback port until the test ends and
// returns its base URL.
func serveLoopback(t *testing.T, impl Impl) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = impl.Serve(ln)
	}()
	t.Cleanup(func() {
		ln.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop after its listener closed")
		}
	})
	return "http://" + ln.Addr().String()
}

func checkFlagStep(t *testing.T, base string, i int, st flagStep) {
	t.Helper()
	req, err := http.NewRequest(st.method, base+st.path, strings.NewReader(st.body))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"X-API-Key": st.apiKey, "X-Tenant-ID": st.tenant, "Idempotency-Key": st.idemKey} {
		if v != "" {
			req.Header.Set(name, v)
		}
	}
	if st.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("step %d: %v", i, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != st.status {
		t.Errorf("step %d: %s %s: status %d, want %d (%s)", i, st.method, st.path, resp.StatusCode, st.status, body)
		return
	}
	if st.status == 201 {
		if got := resp.Header.Get("Location"); got != st.code {
			t.Errorf("step %d: Location %q, want %q", i, got, st.code)
		}
		return
	}
	if st.status < 400 {
		return
	}
	code, issues, err := issueSet(body)
	if err != nil || code != st.code {
		t.Errorf("step %d: %s %s: body %s, want code %s", i, st.method, st.path, body, st.code)
		return
	}
	if st.issues != nil && !slices.Equal(issues, st.issues) {
		t.Errorf("step %d: issues %q, want %q (%s)", i, issues, st.issues, body)
	}
}
