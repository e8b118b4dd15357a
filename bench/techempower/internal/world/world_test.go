package world_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx/bench/techempower/internal/pgtest"
	"github.com/fxhq/fx/bench/techempower/internal/world"
)

// TestWorldAgainstPostgres runs every call against TFB's database in a
// real PostgreSQL: the rows read are rows of the table, the fortunes are
// the 12 rows and the request-time one in message order, and an update is
// what the table holds afterwards.
func TestWorldAgainstPostgres(t *testing.T) {
	pg := pgtest.Start(t)
	db, err := world.Open(pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if got := db.Pool().Config().MaxConns; got != world.PoolSize() {
		t.Errorf("MaxConns = %d, want PoolSize %d", got, world.PoolSize())
	}

	w, err := db.World(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkRow(t, db, w)

	ws, err := db.Worlds(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 20 {
		t.Fatalf("Worlds(20) returned %d rows", len(ws))
	}
	for _, w := range ws {
		checkRow(t, db, w)
	}

	fs, err := db.Fortunes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 13 {
		t.Fatalf("Fortunes returned %d, want 12 rows and the request-time one", len(fs))
	}
	for i := 1; i < len(fs); i++ {
		if fs[i-1].Message > fs[i].Message {
			t.Errorf("fortunes out of order: %q before %q", fs[i-1].Message, fs[i].Message)
		}
	}
	if fs[5].ID != 0 || fs[5].Message != "Additional fortune added at request time." {
		t.Errorf("fortune 5 = %+v, want the request-time one", fs[5])
	}
	if fs[12].Message != "フレームワークのベンチマーク" {
		t.Errorf("last fortune = %q, want the Japanese one (UTF-8 read intact)", fs[12].Message)
	}

	for range 5 { // with 500 draws of 10,000 ids, repeats are all but certain
		up, err := db.Update(ctx, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(up) != 500 {
			t.Fatalf("Update(500) returned %d rows", len(up))
		}
		for _, w := range up {
			checkRow(t, db, w)
		}
	}
}

// checkRow fails t unless w is what the World table holds for w.ID.
func checkRow(t *testing.T, db *world.DB, w world.World) {
	t.Helper()
	if w.ID < 1 || w.ID > world.Rows {
		t.Fatalf("id %d outside 1..%d", w.ID, world.Rows)
	}
	var n int32
	if err := db.Pool().QueryRow(context.Background(), "SELECT randomnumber FROM world WHERE id = $1", w.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != w.RandomNumber {
		t.Errorf("row %d: returned randomNumber %d, the table holds %d", w.ID, w.RandomNumber, n)
	}
}

// TestRenderFortunes checks the page byte for byte: TFB's markup, each
// message escaped for HTML text, UTF-8 passed through.
func TestRenderFortunes(t *testing.T) {
	var b strings.Builder
	err := world.RenderFortunes(&b, []world.Fortune{
		{11, `<script>alert("x");</script>`},
		{2, "aren't & —"},
		{12, "フレームワーク"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>` +
		`<tr><th>id</th><th>message</th></tr>` +
		`<tr><td>11</td><td>&lt;script&gt;alert(&#34;x&#34;);&lt;/script&gt;</td></tr>` +
		`<tr><td>2</td><td>aren&#39;t &amp; —</td></tr>` +
		`<tr><td>12</td><td>フレームワーク</td></tr>` +
		`</table></body></html>`
	if b.String() != want {
		t.Errorf("page:\n%s\nwant:\n%s", b.String(), want)
	}
}
