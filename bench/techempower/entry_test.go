package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx/bench/techempower/internal/pgtest"
	"github.com/fxhq/fx/bench/techempower/internal/tfbcheck"
	"github.com/fxhq/fx/bench/techempower/internal/world"
	"github.com/jackc/pgx/v5"
)

// entry is the service under test, serving on 127.0.0.1 with its own
// PostgreSQL.
type entry struct {
	base string // http://127.0.0.1:PORT
	addr string
	pg   *pgtest.Server
	db   *world.DB
}

// startEntry starts PostgreSQL (pgtest) and the entry on a free loopback
// port, its pool on url (pg.URL when url is ""); both stop at cleanup.
func startEntry(t *testing.T, pg *pgtest.Server, url string, timeout time.Duration) *entry {
	t.Helper()
	if url == "" {
		url = pg.URL
	}
	db, err := world.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	app := newApp(db, slog.New(slog.DiscardHandler), timeout)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()
	t.Cleanup(func() {
		if err := app.Shutdown(); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		<-served
		db.Close()
	})
	return &entry{base: "http://" + ln.Addr().String(), addr: ln.Addr().String(), pg: pg, db: db}
}

// response is one answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

var client = &http.Client{Timeout: 30 * time.Second}

func (e *entry) get(t *testing.T, path string) response {
	t.Helper()
	resp, err := client.Get(e.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", path, err)
	}
	return response{resp.StatusCode, resp.Header, body}
}

// fortunesPage is the page TFB's verifier accepts (its valid_fortune),
// byte for byte as html/template writes it: quotes and + escaped as &#34;,
// &#39; and &#43; (TFB normalises these numeric references), no whitespace
// between tags.
const fortunesPage = `<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>` +
	`<tr><th>id</th><th>message</th></tr>` +
	`<tr><td>11</td><td>&lt;script&gt;alert(&#34;This should not be displayed in a browser alert box.&#34;);&lt;/script&gt;</td></tr>` +
	`<tr><td>4</td><td>A bad random number generator: 1, 1, 1, 1, 1, 4.33e&#43;67, 1, 1, 1</td></tr>` +
	`<tr><td>5</td><td>A computer program does what you tell it to do, not what you want it to do.</td></tr>` +
	`<tr><td>2</td><td>A computer scientist is someone who fixes things that aren&#39;t broken.</td></tr>` +
	`<tr><td>8</td><td>A list is only as strong as its weakest link. — Donald Knuth</td></tr>` +
	`<tr><td>0</td><td>Additional fortune added at request time.</td></tr>` +
	`<tr><td>3</td><td>After enough decimal places, nobody gives a damn.</td></tr>` +
	`<tr><td>7</td><td>Any program that runs right is obsolete.</td></tr>` +
	`<tr><td>10</td><td>Computers make very fast, very accurate mistakes.</td></tr>` +
	`<tr><td>6</td><td>Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen</td></tr>` +
	`<tr><td>9</td><td>Feature: A bug with seniority.</td></tr>` +
	`<tr><td>1</td><td>fortune: No such file or directory</td></tr>` +
	`<tr><td>12</td><td>フレームワークのベンチマーク</td></tr>` +
	`</table></body></html>`

// clamping is TFB's table for ?queries=N: what each value reads.
var clamping = []struct {
	query string
	rows  int
}{
	{"", 1}, // no parameter at all
	{"?queries=", 1},
	{"?queries=foo", 1},
	{"?queries=2.5", 1},
	{"?queries=0", 1},
	{"?queries=-3", 1},
	{"?queries=1", 1},
	{"?queries=2", 2},
	{"?queries=20", 20},
	{"?queries=500", 500},
	{"?queries=501", 500},
	{"?queries=99999999999999999999", 1}, // out of int's range: not a number
}

// TestRules checks every rule of TFB's six test types against the entry
// serving on loopback with TFB's database in a real PostgreSQL: headers,
// bodies, the clamping of ?queries, the fortunes page byte for byte, the
// updates read back from the table, and the statements each request runs
// as pg_stat_statements counts them.
func TestRules(t *testing.T) {
	pg := pgtest.Start(t)
	e := startEntry(t, pg, "", 5*time.Second)
	stats := openStats(t, pg.URL)

	types := []struct {
		path        string
		contentType *regexp.Regexp
	}{
		{"/json", tfbcheck.ContentJSON},
		{"/plaintext", tfbcheck.ContentPlain},
		{"/db", tfbcheck.ContentJSON},
		{"/queries?queries=2", tfbcheck.ContentJSON},
		{"/fortunes", tfbcheck.ContentHTML},
		{"/updates?queries=2", tfbcheck.ContentJSON},
	}

	t.Run("headers", func(t *testing.T) {
		dates := map[string]string{}
		for _, tt := range types {
			r := e.get(t, tt.path)
			tfbcheck.Headers(t, tt.path, r.status, r.header, r.body, tt.contentType)
			dates[tt.path] = r.header.Get("Date")
		}
		// TFB asks again a few seconds later: the Date must have moved on
		// (not cached once). fasthttp refreshes it every second; two
		// leave room for a late tick on a loaded machine.
		time.Sleep(2 * time.Second)
		for _, tt := range types {
			if d := e.get(t, tt.path).header.Get("Date"); d == dates[tt.path] {
				t.Errorf("%s: Date %q did not change in two seconds", tt.path, d)
			}
		}
	})

	t.Run("json", func(t *testing.T) {
		r := e.get(t, "/json")
		if string(r.body) != `{"message":"Hello, World!"}` {
			t.Errorf("body %s", r.body)
		}
	})

	t.Run("plaintext", func(t *testing.T) {
		r := e.get(t, "/plaintext")
		if string(r.body) != "Hello, World!" {
			t.Errorf("body %q", r.body)
		}
	})

	t.Run("plaintext pipelined", func(t *testing.T) {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		const depth = 16 // wrk's pipeline depth in TFB's plaintext test
		req := "GET /plaintext HTTP/1.1\r\nHost: tfb\r\nAccept: text/plain\r\n\r\n"
		if _, err := io.WriteString(c, strings.Repeat(req, depth)); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		for i := range depth {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("response %d of %d: %v", i+1, depth, err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(body) != "Hello, World!" {
				t.Fatalf("response %d: %d %q", i+1, resp.StatusCode, body)
			}
		}
	})

	t.Run("db", func(t *testing.T) {
		r := e.get(t, "/db")
		var w map[string]any
		if err := json.Unmarshal(r.body, &w); err != nil {
			t.Fatalf("not a JSON object: %v: %s", err, r.body)
		}
		tfbcheck.WorldOf(t, "/db", w)
	})

	for _, path := range []string{"/queries", "/updates"} {
		t.Run(path+" clamping", func(t *testing.T) {
			for _, c := range clamping {
				r := e.get(t, path+c.query)
				tfbcheck.Headers(t, path+c.query, r.status, r.header, r.body, tfbcheck.ContentJSON)
				if ws := tfbcheck.Worlds(t, path+c.query, r.body); len(ws) != c.rows {
					t.Errorf("%s%s: %d rows, want %d", path, c.query, len(ws), c.rows)
				}
			}
		})
	}

	t.Run("fortunes", func(t *testing.T) {
		r := e.get(t, "/fortunes")
		if string(r.body) != fortunesPage {
			t.Errorf("page:\n%s\nwant:\n%s", r.body, fortunesPage)
		}
	})

	t.Run("updates persisted", func(t *testing.T) {
		for _, n := range []int{1, 20, 500} {
			path := "/updates?queries=" + strconv.Itoa(n)
			ws := tfbcheck.Worlds(t, path, e.get(t, path).body)
			if len(ws) != n {
				t.Fatalf("%s: %d rows", path, len(ws))
			}
			for _, w := range ws {
				var held int32
				if err := stats.QueryRow(context.Background(), "SELECT randomnumber FROM world WHERE id = $1", w.ID).Scan(&held); err != nil {
					t.Fatal(err)
				}
				if held != w.RandomNumber {
					t.Errorf("%s: row %d answered randomNumber %d, the table holds %d", path, w.ID, w.RandomNumber, held)
				}
			}
		}
	})

	t.Run("statements per request", func(t *testing.T) {
		const requests = 10
		for _, tc := range []struct {
			path              string
			table             string
			reads, maxWrites  int64
			minWrites, rowsRd int64
		}{
			{"/db", "world", 1, 0, 0, 1},
			{"/queries?queries=20", "world", 20, 0, 0, 20},
			{"/queries?queries=foo", "world", 1, 0, 0, 1},
			{"/queries?queries=501", "world", 500, 0, 0, 500},
			{"/fortunes", "fortune", 1, 0, 0, 12},
			{"/updates?queries=20", "world", 20, 20, 1, 20},
			{"/updates?queries=1", "world", 1, 1, 1, 1},
		} {
			before := tally(t, stats, tc.table)
			for range requests {
				if r := e.get(t, tc.path); r.status != 200 {
					t.Fatalf("%s: %d %s", tc.path, r.status, r.body)
				}
			}
			d := tally(t, stats, tc.table).minus(before)
			if d.reads != requests*tc.reads {
				t.Errorf("%s: %d SELECTs for %d requests, want %d each", tc.path, d.reads, requests, tc.reads)
			}
			if d.rowsRead != requests*tc.rowsRd {
				t.Errorf("%s: %d rows read for %d requests, want %d each", tc.path, d.rowsRead, requests, tc.rowsRd)
			}
			if d.writes < requests*tc.minWrites || d.writes > requests*tc.maxWrites {
				t.Errorf("%s: %d UPDATEs for %d requests, want %d to %d each", tc.path, d.writes, requests, tc.minWrites, tc.maxWrites)
			}
			if d.others != 0 {
				t.Errorf("%s: %d other statements on %s", tc.path, d.others, tc.table)
			}
		}
	})

	t.Run("unknown path", func(t *testing.T) {
		r := e.get(t, "/nope")
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		if err := json.Unmarshal(r.body, &env); r.status != 404 || err != nil || env.Error.Code != "FX_NOT_FOUND" {
			t.Errorf("GET /nope: %d %s, want the 404 FX_NOT_FOUND envelope", r.status, r.body)
		}
	})

	t.Run("pool exhausted", func(t *testing.T) {
		// A pool of one connection, held by the test: a request waits for
		// it until its deadline and is answered 504 FX_TIMEOUT then.
		small := startEntry(t, pg, pg.URL+"&pool_max_conns=1", 300*time.Millisecond)
		held, err := small.db.Pool().Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer held.Release()
		start := time.Now()
		r := small.get(t, "/db")
		took := time.Since(start)
		checkEnvelope(t, "/db", r, 504, "FX_TIMEOUT")
		if took > 2*time.Second {
			t.Errorf("answered after %v, the deadline is 300ms", took)
		}
	})
}

// statementCounts are pg_stat_statements' sums for one table.
type statementCounts struct{ reads, writes, others, rowsRead int64 }

func (a statementCounts) minus(b statementCounts) statementCounts {
	return statementCounts{a.reads - b.reads, a.writes - b.writes, a.others - b.others, a.rowsRead - b.rowsRead}
}

// openStats connects to the database as the entry does, for the tests'
// own statements (reading pg_stat_statements and the table).
func openStats(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// tally sums pg_stat_statements' calls of the statements naming table (as
// TFB's verifier finds them: the word, case-insensitive), split into
// SELECTs, UPDATEs and the rest, and the rows the SELECTs returned. The
// test's own statements on pg_stat_statements are left out.
func tally(t *testing.T, c *pgx.Conn, table string) statementCounts {
	t.Helper()
	var s statementCounts
	err := c.QueryRow(context.Background(), `
		SELECT
			coalesce(sum(calls) FILTER (WHERE query ~* '^\s*select'), 0),
			coalesce(sum(calls) FILTER (WHERE query ~* '^\s*update'), 0),
			coalesce(sum(calls) FILTER (WHERE query !~* '^\s*(select|update)'), 0),
			coalesce(sum(rows) FILTER (WHERE query ~* '^\s*select'), 0)
		FROM pg_stat_statements
		WHERE query ~* ('\m' || $1 || '\M') AND query !~* 'pg_stat_statements'
			AND query NOT LIKE 'SELECT randomnumber FROM world WHERE id = $1'`, table).
		Scan(&s.reads, &s.writes, &s.others, &s.rowsRead)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkEnvelope fails t unless r is the error envelope of status and code.
func checkEnvelope(t *testing.T, what string, r response, status int, code string) {
	t.Helper()
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil || r.status != status || env.Error.Code != code {
		t.Errorf("%s: %d %s, want the %d %s envelope", what, r.status, r.body, status, code)
	}
	if !tfbcheck.ContentJSON.MatchString(r.header.Get("Content-Type")) {
		t.Errorf("%s: envelope with Content-Type %q", what, r.header.Get("Content-Type"))
	}
}

// TestDatabaseUnreachable: with nothing listening where the database
// should be, every database route answers at once with the 503
// FX_SERVICE_UNAVAILABLE envelope and Retry-After, never the deadline's
// 504 and never a hang; the routes without the database still serve.
func TestDatabaseUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // connections to addr are now refused
	e := startEntry(t, nil, "postgres://benchmarkdbuser:benchmarkdbpass@"+addr+"/hello_world?sslmode=disable", 5*time.Second)
	for _, path := range []string{"/db", "/queries?queries=20", "/fortunes", "/updates?queries=20"} {
		start := time.Now()
		r := e.get(t, path)
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s: answered after %v", path, took)
		}
		checkEnvelope(t, path, r, 503, "FX_SERVICE_UNAVAILABLE")
		if ra := r.header.Get("Retry-After"); ra != "1" {
			t.Errorf("%s: Retry-After %q, want 1", path, ra)
		}
	}
	if r := e.get(t, "/json"); r.status != 200 {
		t.Errorf("/json: %d %s", r.status, r.body)
	}
}

// TestRunNeedsDatabaseURL: the program refuses to start without
// DATABASE_URL, saying which variable is missing, instead of serving
// routes that can only fail.
func TestRunNeedsDatabaseURL(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	err := run("127.0.0.1:0", time.Second)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("run without DATABASE_URL: %v", err)
	}
}
