package bench

import (
	"strconv"
	"sync"
	"time"
)

// The flagship service (examples/orders) written with two peers, Huma
// v2 (orders_huma.go) and Fiber v3 (orders_fiber.go), with the same
// routes and rules, so that cmd/loc can put the line counts side by side
// and TestFlagshipPeers can hold both to the fx example's answers:
//
//	POST /orders       API key, tenant, rate limit, Idempotency-Key required → 201 + Location
//	GET  /orders/:id   → 200, 404 APP_ORDER_NOT_FOUND, 422 for an id that is not ord_<digits>
//	GET  /orders       ?status= (open|paid|shipped) ?customer= (≤ 80) ?limit= (1-100)
//
// What this file holds is shared by the two peers and counted for each:
// the in-memory store (examples/orders has its own) and the errors they
// answer, as *AppError for the envelope their error handlers write.

// flagOrder is an order as the peers return it, over each one's line type.
type flagOrder[L any] struct {
	ID       string    `json:"id"`
	Status   string    `json:"status"`
	Customer string    `json:"customer"`
	Email    string    `json:"email,omitempty"`
	Lines    []L       `json:"lines"`
	Created  time.Time `json:"created"`
}

// flagList is the body of GET /orders.
type flagList[L any] struct {
	Orders []flagOrder[L] `json:"orders"`
}

// flagStore keeps every tenant's orders in memory.
type flagStore[L any] struct {
	mu       sync.Mutex
	last     int
	byTenant map[string][]flagOrder[L]
}

func newFlagStore[L any]() *flagStore[L] {
	return &flagStore[L]{byTenant: map[string][]flagOrder[L]{}}
}

func (s *flagStore[L]) create(tenant, customer, email string, lines []L) *flagOrder[L] {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last++
	o := flagOrder[L]{ID: "ord_" + strconv.Itoa(s.last), Status: "open", Customer: customer,
		Email: email, Lines: lines, Created: time.Now().UTC()}
	s.byTenant[tenant] = append(s.byTenant[tenant], o)
	return &o
}

func (s *flagStore[L]) get(tenant, id string) (*flagOrder[L], bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.byTenant[tenant] {
		if o.ID == id {
			return &o, true
		}
	}
	return nil, false
}

func (s *flagStore[L]) list(tenant, status, customer string, limit int) []flagOrder[L] {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []flagOrder[L]{}
	if limit == 0 {
		limit = 20
	}
	for _, o := range s.byTenant[tenant] {
		if len(out) == limit {
			break
		}
		if (status == "" || o.Status == status) && (customer == "" || o.Customer == customer) {
			out = append(out, o)
		}
	}
	return out
}

// The errors of the flagship, with fx's codes.
var (
	errFlagNotFound    = &AppError{Status: 404, Code: "APP_ORDER_NOT_FOUND", Message: "No such order"}
	errFlagUnauth      = &AppError{Status: 401, Code: "FX_UNAUTHENTICATED", Message: "Authentication required"}
	errFlagNoTenant    = &AppError{Status: 400, Code: "FX_TENANT_REQUIRED", Message: "Tenant required"}
	errFlagForbidden   = &AppError{Status: 403, Code: "FX_FORBIDDEN", Message: "Forbidden"}
	errFlagRateLimited = &AppError{Status: 429, Code: "FX_RATE_LIMITED", Message: "Rate limit exceeded"}
	errFlagKeyRequired = &AppError{Status: 400, Code: "FX_IDEMPOTENCY_KEY_REQUIRED", Message: "Idempotency-Key required"}
	errFlagKeyReused   = &AppError{Status: 422, Code: "FX_IDEMPOTENCY_KEY_REUSED", Message: "Idempotency-Key reused with another request"}
)

// flagIDPattern is what an order id looks like.
const flagIDPattern = `^ord_[0-9]{1,12}$`
