package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
	"golang.org/x/time/rate"
)

// The flagship (examples/orders) in Huma v2 on chi: the operations and
// their constraints in Huma's tags, its OpenAPI document and /docs at
// their defaults, and by hand what Huma does not ship: API-key
// authentication, the tenant check, a per-tenant rate limit
// (golang.org/x/time/rate) and idempotency (required key, replay, 422 for
// a key reused with another body; a duplicate sent while the first is in
// flight runs too, where fx answers 409).

type humaLine struct {
	SKU string `json:"sku" minLength:"3" maxLength:"32" pattern:"^[A-Z0-9-]+$" doc:"Stock keeping unit" example:"BOOK-1"`
	Qty int    `json:"qty" minimum:"1" maximum:"100" example:"2"`
}

type humaNewOrder struct {
	Customer string     `json:"customer" minLength:"1" maxLength:"80" doc:"Who pays" example:"Ada Lovelace"`
	Email    string     `json:"email,omitempty" format:"email" example:"ada@example.com"`
	Lines    []humaLine `json:"lines" minItems:"1" maxItems:"50"`
}

type humaCreateIn struct {
	Tenant string `header:"X-Tenant-ID"`
	Body   humaNewOrder
}

type humaOrderOut struct {
	Location string `header:"Location"`
	Body     *flagOrder[humaLine]
}

type humaGetIn struct {
	Tenant string `header:"X-Tenant-ID"`
	ID     string `path:"id" pattern:"^ord_[0-9]{1,12}$" example:"ord_1"`
}

type humaListIn struct {
	Tenant   string `header:"X-Tenant-ID"`
	Status   string `query:"status" enum:"open,paid,shipped"`
	Customer string `query:"customer" maxLength:"80" doc:"Only this customer's orders"`
	Limit    int    `query:"limit" minimum:"1" maximum:"100" doc:"At most this many (default 20)"`
}

// NewHumaOrders is the flagship in Huma: keys maps an API key to its
// tenant; limit is the requests per minute of a tenant.
func NewHumaOrders(keys map[string]string, limit int) Impl {
	db := newFlagStore[humaLine]()
	r := chi.NewMux()
	api := humachi.New(r, huma.DefaultConfig("Orders API", "1.0.0"))
	var mu sync.Mutex
	limiters := map[string]*rate.Limiter{}
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		tenant, ok := keys[ctx.Header("X-API-Key")]
		var err *AppError
		switch t := ctx.Header("X-Tenant-ID"); {
		case !ok:
			err = errFlagUnauth
		case t == "":
			err = errFlagNoTenant
		case t != tenant:
			err = errFlagForbidden
		}
		if err == nil {
			mu.Lock()
			l := limiters[tenant]
			if l == nil {
				l = rate.NewLimiter(rate.Every(time.Minute/time.Duration(limit)), limit)
				limiters[tenant] = l
			}
			mu.Unlock()
			if !l.Allow() {
				err = errFlagRateLimited
			}
		}
		if err != nil {
			_ = huma.WriteErr(api, ctx, err.Status, err.Message, err)
			return
		}
		next(ctx)
	})
	idem := &humaIdempotency{api: api, seen: map[string]humaSeen{}}
	huma.Register(api, huma.Operation{OperationID: "create-order", Method: http.MethodPost, Path: "/orders",
		Summary: "Create an order", DefaultStatus: 201, Middlewares: huma.Middlewares{idem.handle},
		Errors: []int{400, 401, 403, 422, 429}},
		func(_ context.Context, in *humaCreateIn) (*humaOrderOut, error) {
			o := db.create(in.Tenant, in.Body.Customer, in.Body.Email, in.Body.Lines)
			return &humaOrderOut{Location: "/orders/" + o.ID, Body: o}, nil
		})
	huma.Register(api, huma.Operation{OperationID: "get-order", Method: http.MethodGet, Path: "/orders/{id}",
		Summary: "Get an order", Errors: []int{400, 401, 403, 404, 422, 429}},
		func(_ context.Context, in *humaGetIn) (*humaBody[*flagOrder[humaLine]], error) {
			o, ok := db.get(in.Tenant, in.ID)
			if !ok {
				return nil, errFlagNotFound
			}
			return &humaBody[*flagOrder[humaLine]]{Body: o}, nil
		})
	huma.Register(api, huma.Operation{OperationID: "list-orders", Method: http.MethodGet, Path: "/orders",
		Summary: "List orders", Errors: []int{400, 401, 403, 422, 429}},
		func(_ context.Context, in *humaListIn) (*humaBody[flagList[humaLine]], error) {
			return &humaBody[flagList[humaLine]]{Body: flagList[humaLine]{Orders: db.list(in.Tenant, in.Status, in.Customer, in.Limit)}}, nil
		})
	return Impl{HTTP: r}
}

// humaIdempotency keeps each caller's Idempotency-Keys with the hash of
// the body they came with and the response they got.
type humaIdempotency struct {
	api  huma.API
	mu   sync.Mutex
	seen map[string]humaSeen
}

type humaSeen struct {
	sum            [32]byte
	status         int
	location, body string
}

func (m *humaIdempotency) handle(ctx huma.Context, next func(huma.Context)) {
	key := ctx.Header("Idempotency-Key")
	if key == "" {
		_ = huma.WriteErr(m.api, ctx, 400, errFlagKeyRequired.Message, errFlagKeyRequired)
		return
	}
	body, err := io.ReadAll(ctx.BodyReader())
	if err != nil {
		_ = huma.WriteErr(m.api, ctx, 500, InternalMessage)
		return
	}
	key = ctx.Header("X-API-Key") + "\n" + key
	sum := sha256.Sum256(body)
	m.mu.Lock()
	seen, ok := m.seen[key]
	m.mu.Unlock()
	switch {
	case ok && seen.sum != sum:
		_ = huma.WriteErr(m.api, ctx, 422, errFlagKeyReused.Message, errFlagKeyReused)
		return
	case ok:
		ctx.SetHeader("Content-Type", "application/json")
		ctx.SetHeader("Location", seen.location)
		ctx.SetHeader("Idempotent-Replayed", "true")
		ctx.SetStatus(seen.status)
		_, _ = io.WriteString(ctx.BodyWriter(), seen.body)
		return
	}
	rec := &humaRecorder{humaCtx: ctx, in: bytes.NewReader(body)}
	next(rec)
	m.mu.Lock()
	m.seen[key] = humaSeen{sum: sum, status: rec.status, location: rec.location, body: rec.out.String()}
	m.mu.Unlock()
}

// humaRecorder is a huma.Context that serves the body read already and
// keeps a copy of the status, Location and body written.
type humaRecorder struct {
	humaCtx  // huma.Context, under a name that does not hide its Context method
	in       io.Reader
	status   int
	location string
	out      bytes.Buffer
}

func (r *humaRecorder) BodyReader() io.Reader { return r.in }
func (r *humaRecorder) SetStatus(s int)       { r.status = s; r.humaCtx.SetStatus(s) }
func (r *humaRecorder) SetHeader(name, value string) {
	if http.CanonicalHeaderKey(name) == "Location" {
		r.location = value
	}
	r.humaCtx.SetHeader(name, value)
}
func (r *humaRecorder) BodyWriter() io.Writer { return io.MultiWriter(r.humaCtx.BodyWriter(), &r.out) }

type humaCtx = huma.Context
