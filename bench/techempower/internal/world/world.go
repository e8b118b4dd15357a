// Package world is the database side of the TechEmpower Framework
// Benchmarks entries (TFB's World and Fortune tables on PostgreSQL): one
// pgx pool sized to the process, the statements prepared on every
// connection, the row types, the fortunes template. The fx entry and its
// raw-fasthttp and Fiber peers all use it, so the three differ only in the
// framework around it.
//
// Every call takes a context and passes it to pgx: the pool's wait for a
// connection, the dial and every statement end when it ends, so a caller
// that bounds its context (fx's c.Context() with a deadline) never waits
// longer on the database than that.
package world

import (
	"cmp"
	"context"
	"html/template"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Rows is the number of rows of the World table; ids run from 1 to Rows.
const Rows = 10000

// MaxQueries is the most rows one /queries or /updates request reads.
const MaxQueries = 500

// World is a row of the World table, serialised as TFB wants it.
type World struct {
	ID           int32 `json:"id"`
	RandomNumber int32 `json:"randomNumber"`
}

// Fortune is a row of the Fortune table.
type Fortune struct {
	ID      int32
	Message string
}

// The prepared statements: each connection prepares them once, when it is
// opened (Open's AfterConnect), and every call names them, so a request
// sends only Bind and Execute for each statement (no Parse).
const (
	selectWorld   = "select_world"
	selectFortune = "select_fortune"
	updateWorld   = "update_world"
)

var statements = []struct{ name, sql string }{
	{selectWorld, "SELECT id, randomnumber FROM world WHERE id = $1"},
	{selectFortune, "SELECT id, message FROM fortune"},
	{updateWorld, "UPDATE world SET randomnumber = $2 WHERE id = $1"},
}

// PoolSize is the size of the pool Open makes when the connection string
// does not set pool_max_conns: 4 connections per P (runtime.GOMAXPROCS).
// A handler holds a connection only while its statements run, so a few per
// P keep the database busy while the process's goroutines prepare the next
// ones; more would only queue inside PostgreSQL. A request beyond the pool
// waits for a connection until its context ends.
func PoolSize() int32 { return 4 * int32(runtime.GOMAXPROCS(0)) }

// DB is the pool the handlers share.
type DB struct {
	pool *pgxpool.Pool
}

// Open makes the pool for url (a pgx connection string: postgres://... or
// key=value pairs) without connecting: connections are opened on demand,
// each preparing the statements, so a process started before its database
// serves once the database is up. A malformed url is an error.
func Open(url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = PoolSize()
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		for _, s := range statements {
			if _, err := c.Prepare(ctx, s.name, s.sql); err != nil {
				return err
			}
		}
		return nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return &DB{pool: pool}, nil
}

// Close closes the pool's connections, waiting for those in use.
func (db *DB) Close() { db.pool.Close() }

// Pool is the pgx pool, for what the entries' tests inspect.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// RandomID is an id of the World table, uniformly from 1 to Rows.
func RandomID() int32 { return rand.Int32N(Rows) + 1 }

// World reads the row of a random id: one statement.
func (db *DB) World(ctx context.Context) (World, error) {
	var w World
	err := db.pool.QueryRow(ctx, selectWorld, RandomID()).Scan(&w.ID, &w.RandomNumber)
	return w, err
}

// Worlds reads n rows of random ids (repeats allowed), each by its own
// statement, one after the other on one connection: n statements.
func (db *DB) Worlds(ctx context.Context, n int) ([]World, error) {
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return readWorlds(ctx, c.Conn(), n)
}

// readWorlds reads n rows of random ids on c, one statement each.
func readWorlds(ctx context.Context, c *pgx.Conn, n int) ([]World, error) {
	ws := make([]World, n)
	for i := range ws {
		w := &ws[i]
		if err := c.QueryRow(ctx, selectWorld, RandomID()).Scan(&w.ID, &w.RandomNumber); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// Update reads n rows of random ids one by one (n statements), gives each
// a new random number and writes them back in one batch (n UPDATE
// statements in one round trip and one implicit transaction, the rows
// locked in the order of their ids, so concurrent updates never deadlock).
// An id drawn twice is written twice; the table keeps the number of its
// last draw, and the returned slice is set to it, so what is returned is
// what the table holds.
func (db *DB) Update(ctx context.Context, n int) ([]World, error) {
	c, err := db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	ws, err := readWorlds(ctx, c.Conn(), n)
	if err != nil {
		return nil, err
	}
	for i := range ws {
		ws[i].RandomNumber = RandomID()
	}
	sorted := slices.Clone(ws)
	slices.SortStableFunc(sorted, func(a, b World) int { return cmp.Compare(a.ID, b.ID) })
	var b pgx.Batch
	for i, w := range sorted {
		if i+1 < len(sorted) && sorted[i+1].ID == w.ID {
			continue // the later draw of this id wins: write it only
		}
		b.Queue(updateWorld, w.ID, w.RandomNumber)
	}
	if err := c.SendBatch(ctx, &b).Close(); err != nil {
		return nil, err
	}
	for i := range ws { // a repeated id shows the number written
		j, _ := slices.BinarySearchFunc(sorted, ws[i].ID, func(w World, id int32) int { return cmp.Compare(w.ID, id) })
		for j+1 < len(sorted) && sorted[j+1].ID == ws[i].ID {
			j++
		}
		ws[i].RandomNumber = sorted[j].RandomNumber
	}
	return ws, nil
}

// Fortunes reads every row of the Fortune table (one statement), adds
// the fortune TFB adds at request time and sorts them by message.
func (db *DB) Fortunes(ctx context.Context) ([]Fortune, error) {
	rows, _ := db.pool.Query(ctx, selectFortune)
	fs := make([]Fortune, 0, 16)
	var f Fortune
	_, err := pgx.ForEachRow(rows, []any{&f.ID, &f.Message}, func() error {
		fs = append(fs, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	fs = append(fs, Fortune{Message: "Additional fortune added at request time."})
	slices.SortFunc(fs, func(a, b Fortune) int { return strings.Compare(a.Message, b.Message) })
	return fs, nil
}

// fortunesPage is TFB's fortunes page; html/template escapes each message
// for its place in the page (text inside a td), so a stored <script> is
// shown as text.
var fortunesPage = template.Must(template.New("fortunes").Parse(
	`<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>` +
		`<tr><th>id</th><th>message</th></tr>` +
		`{{range .}}<tr><td>{{.ID}}</td><td>{{.Message}}</td></tr>{{end}}` +
		`</table></body></html>`))

// ContentTypeHTML is the fortunes page's Content-Type.
const ContentTypeHTML = "text/html; charset=utf-8"

// RenderFortunes writes the fortunes page of fs to w.
func RenderFortunes(w io.Writer, fs []Fortune) error { return fortunesPage.Execute(w, fs) }
