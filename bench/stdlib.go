package bench

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// The chi and ServeMux implementations share the usual net/http idiom:
// handlers return an error through a small adapter that writes the
// envelope, a recover middleware answers panics, bodies are encoded and
// decoded with encoding/json, and orders are checked by hand (CheckOrder).

// errHandler is a handler that returns its failure.
type errHandler func(w http.ResponseWriter, r *http.Request) error

func (h errHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h(w, r); err != nil {
		status, env := ToEnvelope(err)
		writeJSON(w, status, env)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func stdRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if rec := recover(); rec != nil {
				if rec == http.ErrAbortHandler {
					panic(rec)
				}
				writeJSON(w, 500, InternalEnvelope)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func stdPassThrough(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { next.ServeHTTP(w, r) })
}

func stdNotFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 404, NotFoundEnvelope(r.Method, r.URL.Path))
}

func stdHello(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, 200, Hello{Message: HelloMessage})
	return nil
}

func stdUser(id string, w http.ResponseWriter) error {
	if id == MissingUserID {
		return ErrUserNotFound
	}
	writeJSON(w, 200, NewUser(id))
	return nil
}

func stdError(w http.ResponseWriter, r *http.Request) error { return ErrUserNotFound }

func stdPanic(w http.ResponseWriter, r *http.Request) error { panic(ErrBoom) }

func stdOrders(w http.ResponseWriter, r *http.Request) error {
	var o Order
	if err := json.NewDecoder(r.Body).Decode(&o); err != nil {
		return BadJSONError()
	}
	if issues := CheckOrder(&o); len(issues) > 0 {
		return NewValidationError(issues)
	}
	writeJSON(w, 201, &o)
	return nil
}

// NewChi is the service in chi.
func NewChi(middleware int) Impl {
	r := chi.NewRouter()
	r.Use(stdRecover)
	for range middleware {
		r.Use(stdPassThrough)
	}
	r.NotFound(stdNotFound)
	r.MethodNotAllowed(stdNotFound)
	r.Method("GET", "/hello", errHandler(stdHello))
	r.Method("GET", "/users/{id}", errHandler(func(w http.ResponseWriter, r *http.Request) error {
		return stdUser(chi.URLParam(r, "id"), w)
	}))
	r.Method("GET", "/error", errHandler(stdError))
	r.Method("GET", "/panic", errHandler(stdPanic))
	r.Method("POST", "/orders", errHandler(stdOrders))
	return Impl{HTTP: r}
}

// NewServeMux is the service in net/http's ServeMux (Go 1.22 patterns);
// the "/" pattern answers everything unmatched, including a known path
// with another method.
func NewServeMux(middleware int) Impl {
	mux := http.NewServeMux()
	mux.Handle("GET /hello", errHandler(stdHello))
	mux.Handle("GET /users/{id}", errHandler(func(w http.ResponseWriter, r *http.Request) error {
		return stdUser(r.PathValue("id"), w)
	}))
	mux.Handle("GET /error", errHandler(stdError))
	mux.Handle("GET /panic", errHandler(stdPanic))
	mux.Handle("POST /orders", errHandler(stdOrders))
	mux.HandleFunc("/", stdNotFound)
	var h http.Handler = mux
	for range middleware {
		h = stdPassThrough(h)
	}
	return Impl{HTTP: stdRecover(h)}
}
