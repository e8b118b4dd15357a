// Package tfbcheck asks a running TechEmpower server each of TFB's six
// paths and fails the test unless every answer has the shape TFB's
// verifier wants: status 200, the headers (Server, a Date in HTTP's
// format, the test type's Content-Type, a Content-Length equal to the
// body's), the bodies, the clamping of ?queries=, the fortunes page of
// the table's rows, and updates persisted in the table. The raw-fasthttp
// and Fiber peers' tests run it against the peer, so the load script's
// three servers are known to do the same work.
package tfbcheck

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fxhq/fx/bench/techempower/internal/pgtest"
	"github.com/fxhq/fx/bench/techempower/internal/world"
)

// CheckServer starts a real PostgreSQL (pgtest) and a world pool on it,
// has serve start a server of the six tests on that pool and a loopback
// listener (serving in a goroutine of its own; the function it returns
// stops the server), and runs Check against it.
func CheckServer(t *testing.T, serve func(db *world.DB, ln net.Listener) (stop func() error)) {
	t.Helper()
	pg := pgtest.Start(t)
	db, err := world.Open(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := serve(db, ln)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("stopping the server: %v", err)
		}
	}()
	Check(t, "http://"+ln.Addr().String(), pg.URL)
}

// TFB's Content-Type rules per test type.
var (
	ContentJSON  = regexp.MustCompile(`^application/json(; ?charset=(UTF|utf)-8)?$`)
	ContentHTML  = regexp.MustCompile(`^text/html; ?charset=(UTF|utf)-8$`)
	ContentPlain = regexp.MustCompile(`^text/plain(; ?charset=(UTF|utf)-8)?$`)
)

var client = &http.Client{Timeout: 30 * time.Second}

// get asks base+path and checks the headers every answer must carry.
func get(t *testing.T, base, path string, contentType *regexp.Regexp) []byte {
	t.Helper()
	resp, err := client.Get(base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	Headers(t, path, resp.StatusCode, resp.Header, body, contentType)
	return body
}

// Headers applies TFB's rules to an answer of path: status 200, a Server
// header, a Date in HTTP's format, a Content-Type of the test type's
// pattern and a Content-Length equal to the body's length.
func Headers(t *testing.T, path string, status int, h http.Header, body []byte, contentType *regexp.Regexp) {
	t.Helper()
	if status != 200 {
		t.Errorf("%s: status %d, body %s", path, status, body)
	}
	if h.Get("Server") == "" {
		t.Errorf("%s: no Server header", path)
	}
	if _, err := time.Parse(time.RFC1123, h.Get("Date")); err != nil {
		t.Errorf("%s: Date %q: %v", path, h.Get("Date"), err)
	}
	if ct := h.Get("Content-Type"); !contentType.MatchString(ct) {
		t.Errorf("%s: Content-Type %q does not match %s", path, ct, contentType)
	}
	if cl := h.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("%s: Content-Length %q, body of %d bytes", path, cl, len(body))
	}
}

// Worlds decodes a JSON array of World objects, each exactly id and
// randomNumber, integers in 1..world.Rows.
func Worlds(t *testing.T, path string, body []byte) []world.World {
	t.Helper()
	var objs []map[string]any
	if err := json.Unmarshal(body, &objs); err != nil {
		t.Fatalf("%s: %v: %s", path, err, body)
	}
	out := make([]world.World, len(objs))
	for i, o := range objs {
		out[i] = WorldOf(t, path, o)
	}
	return out
}

// WorldOf checks that o is a World object of TFB's shape (exactly id and
// randomNumber, integers in 1..world.Rows) and returns it.
func WorldOf(t *testing.T, path string, o map[string]any) world.World {
	t.Helper()
	if len(o) != 2 {
		t.Errorf("%s: %v: want exactly id and randomNumber", path, o)
	}
	var w world.World
	for key, dst := range map[string]*int32{"id": &w.ID, "randomNumber": &w.RandomNumber} {
		f, ok := o[key].(float64)
		if !ok || f != float64(int32(f)) || f < 1 || f > world.Rows {
			t.Errorf("%s: %s = %v: want an integer in 1..%d", path, key, o[key], world.Rows)
		}
		*dst = int32(f)
	}
	return w
}

// Check runs every check against the server at base (http://host:port),
// whose database is the one of url.
func Check(t *testing.T, base, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	if b := get(t, base, "/json", ContentJSON); string(b) != `{"message":"Hello, World!"}` {
		t.Errorf("/json: %s", b)
	}
	if b := get(t, base, "/plaintext", ContentPlain); string(b) != "Hello, World!" {
		t.Errorf("/plaintext: %q", b)
	}

	var o map[string]any
	if b := get(t, base, "/db", ContentJSON); json.Unmarshal(b, &o) != nil {
		t.Errorf("/db: not an object: %s", b)
	} else {
		WorldOf(t, "/db", o)
	}

	for _, c := range []struct {
		query string
		rows  int
	}{
		{"", 1}, {"?queries=", 1}, {"?queries=foo", 1}, {"?queries=0", 1},
		{"?queries=-4", 1}, {"?queries=1", 1}, {"?queries=7", 7},
		{"?queries=500", 500}, {"?queries=501", 500}, {"?queries=20000", 500},
	} {
		for _, p := range []string{"/queries", "/updates"} {
			if p == "/updates" && c.rows > 20 {
				continue // the clamp is the same code; spare the table's writes
			}
			path := p + c.query
			if ws := Worlds(t, path, get(t, base, path, ContentJSON)); len(ws) != c.rows {
				t.Errorf("%s: %d rows, want %d", path, len(ws), c.rows)
			}
		}
	}

	// updates: what is answered is what the table holds afterwards (an
	// id drawn twice shows the number of its last draw, which is the one
	// written).
	for range 3 {
		for _, w := range Worlds(t, "/updates?queries=20", get(t, base, "/updates?queries=20", ContentJSON)) {
			var n int32
			if err := conn.QueryRow(ctx, "SELECT randomnumber FROM world WHERE id = $1", w.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != w.RandomNumber {
				t.Errorf("/updates: answered %v, the table holds %d", w, n)
			}
		}
	}

	// fortunes: every row of the table, the request-time one, sorted by
	// message, rendered by the shared template (which escapes).
	rows, _ := conn.Query(ctx, "SELECT id, message FROM fortune")
	var fs []world.Fortune
	var f world.Fortune
	if _, err := pgx.ForEachRow(rows, []any{&f.ID, &f.Message}, func() error { fs = append(fs, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(fs) != 12 {
		t.Fatalf("fortune table: %d rows, want 12", len(fs))
	}
	fs = append(fs, world.Fortune{Message: "Additional fortune added at request time."})
	slices.SortFunc(fs, func(a, b world.Fortune) int { return cmp.Compare(a.Message, b.Message) })
	var want strings.Builder
	if err := world.RenderFortunes(&want, fs); err != nil {
		t.Fatal(err)
	}
	page := string(get(t, base, "/fortunes", ContentHTML))
	if page != want.String() {
		t.Errorf("/fortunes:\n got %s\nwant %s", page, want.String())
	}
	for _, s := range []string{"&lt;script&gt;", "フレームワークのベンチマーク"} {
		if !strings.Contains(page, s) {
			t.Errorf("/fortunes: %q missing", s)
		}
	}
}
