package nethttp_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/nethttp"
)

type probeKey struct{}

// middleware.Timeout under the adapter: the deadline is set on a context
// derived from the *http.Request's (its values are visible), a handler that
// honours it gets the 504 envelope, and a client that goes away before the
// deadline still cancels it (context.Canceled, not a 504).
func TestTimeoutThroughAdapter(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(middleware.Timeout(50 * time.Millisecond))
	gotCause := make(chan error, 1)
	app.Get("/q", func(c *fx.Ctx) error {
		if c.Context().Value(probeKey{}) != "from net/http" {
			return errors.New("c.Context() does not derive from the request's context")
		}
		<-c.Context().Done()
		gotCause <- c.Context().Err()
		return c.Context().Err()
	})
	h := nethttp.Handler(app)

	req := httptest.NewRequest("GET", "/q", nil)
	req = req.WithContext(context.WithValue(req.Context(), probeKey{}, "from net/http"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	want := `{"error":{"code":"FX_TIMEOUT","message":"The request was not handled in time"}}`
	if rec.Code != 504 || string(body) != want {
		t.Fatalf("got %d %q, want 504 %s", rec.Code, body, want)
	}
	if err := <-gotCause; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the handler saw %v, want DeadlineExceeded", err)
	}

	// The client leaves after 5ms: the request's context ends first.
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), probeKey{}, "from net/http"))
	time.AfterFunc(5*time.Millisecond, cancel)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/q", nil).WithContext(ctx))
	if err := <-gotCause; !errors.Is(err, context.Canceled) {
		t.Errorf("after the client left the handler saw %v, want Canceled", err)
	}
}
