package bench

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The typed endpoint: one operation whose input is a struct with
// constraints, written in each framework's own way of declaring them (fx:
// fx.Op and `validate` tags; Huma: its JSON Schema tags; Fiber v3 and
// Echo v5: validator/v10 through their binder; Gin: validator/v10 under
// `binding` tags; raw fasthttp: the same checks by hand, the floor):
//
//	POST /typed/orders   body TypedOrder
//	  valid   → 201, the order echoed
//	  invalid → 422 FX_VALIDATION_ERROR listing every failed field
//	            (location "body", path like ["lines","0","sku"])
//
// TestTypedEquivalence holds every implementation to the same status and
// the same set of issue locations and paths (the messages are each
// framework's own words); BenchmarkTyped measures the valid and the 422
// paths.

// TypedPath is the typed endpoint's route.
const TypedPath = "/typed/orders"

// TypedOrder is the typed endpoint's body as fx, Fiber v3, Echo v5 (its
// `validate` tags) and Gin (the same rules under `binding`) declare it;
// Huma's declaration is humaTypedOrder.
type TypedOrder struct {
	Customer string      `json:"customer" validate:"required,max=80" binding:"required,max=80"`
	Email    string      `json:"email,omitempty" validate:"omitempty,email" binding:"omitempty,email"`
	Lines    []TypedLine `json:"lines" validate:"required,min=1,max=50,dive" binding:"required,min=1,max=50,dive"`
}

// TypedLine is one line of a TypedOrder.
type TypedLine struct {
	SKU string `json:"sku" validate:"required,min=3,alphanum" binding:"required,min=3,alphanum"`
	Qty int    `json:"qty" validate:"gte=1,lte=100" binding:"gte=1,lte=100"`
}

// Bodies of POST /typed/orders. TypedInvalid fails five rules in five
// places: customer (required), email (email), lines.0.sku (alphanum and
// min), lines.0.qty (gte), lines.1.qty (lte).
const (
	TypedValid   = `{"customer":"Ada Lovelace","email":"ada@example.com","lines":[{"sku":"A100","qty":2},{"sku":"B200","qty":1}]}`
	TypedInvalid = `{"customer":"","email":"not-an-email","lines":[{"sku":"a!","qty":0},{"sku":"C300","qty":101}]}`
)

// TypedEndpoints are the typed endpoint's benchmarked requests.
var TypedEndpoints = []Endpoint{
	{"typed-valid", "POST", TypedPath, TypedValid, 0, 201, "POST /typed/orders, a valid body of two lines"},
	{"typed-422", "POST", TypedPath, TypedInvalid, 0, 422, "POST /typed/orders, five invalid fields"},
}

// TypedFrameworks lists the typed endpoint's implementations, the
// hand-written floor first. Each New ignores its middleware count.
var TypedFrameworks = []Framework{
	{"raw-fasthttp", NewRawTyped},
	{"fx", NewFXTyped},
	{"fiber-v3", NewFiberV3Typed},
	{"echo-v5", NewEcho5Typed},
	{"gin", NewGinTyped},
	{"huma", NewHumaTyped},
}

// Messages of the hand-written checks, in fx's words.
const (
	msgMaxCustomer = "Must be at most 80 characters long"
	msgMinLines    = "Must have at least 1 item"
	msgMaxLines    = "Must have at most 50 items"
	msgMinSKU      = "Must be at least 3 characters long"
	msgAlphanum    = "Must contain only ASCII letters and digits"
	msgMaxQty      = "Must be at most 100"
)

// CheckTypedOrder validates o by hand with TypedOrder's rules, one issue
// per failed field (its first failed rule, as validator/v10 and fx
// report), in the order fx sorts them. It is the floor's validation.
func CheckTypedOrder(o *TypedOrder) []Issue {
	var issues []Issue
	n := utf8.RuneCountInString(o.Customer)
	switch {
	case n == 0:
		issues = append(issues, Issue{"body", pathCustomer, MsgRequired})
	case n > 80:
		issues = append(issues, Issue{"body", pathCustomer, msgMaxCustomer})
	}
	if o.Email != "" && !ValidEmail(o.Email) {
		issues = append(issues, Issue{"body", pathEmail, MsgEmail})
	}
	switch {
	case o.Lines == nil:
		issues = append(issues, Issue{"body", pathLines, MsgRequired})
	case len(o.Lines) < 1:
		issues = append(issues, Issue{"body", pathLines, msgMinLines})
	case len(o.Lines) > 50:
		issues = append(issues, Issue{"body", pathLines, msgMaxLines})
	}
	for i := range o.Lines {
		l := &o.Lines[i]
		switch {
		case l.Qty < 1:
			issues = append(issues, Issue{"body", linePath(i, "qty"), MsgMinOne})
		case l.Qty > 100:
			issues = append(issues, Issue{"body", linePath(i, "qty"), msgMaxQty})
		}
		switch {
		case l.SKU == "":
			issues = append(issues, Issue{"body", linePath(i, "sku"), MsgRequired})
		case utf8.RuneCountInString(l.SKU) < 3:
			issues = append(issues, Issue{"body", linePath(i, "sku"), msgMinSKU})
		case !isAlphanum(l.SKU):
			issues = append(issues, Issue{"body", linePath(i, "sku"), msgAlphanum})
		}
	}
	return issues
}

var (
	pathCustomer = []string{"customer"}
	pathLines    = []string{"lines"}
)

func linePath(i int, field string) []string {
	return []string{"lines", strconv.Itoa(i), field}
}

func isAlphanum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20 // lower-case ASCII letters; digits are unchanged
		if !(c >= 'a' && c <= 'z') && !(s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return s != ""
}

// splitFieldPath turns a dotted field path with indexes, as validator/v10
// (namespace without its struct name) and Huma (location without "body")
// write it — "lines[0].sku" — into an issue path: ["lines", "0", "sku"].
func splitFieldPath(s string) []string {
	path := []string{}
	for part := range strings.SplitSeq(s, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				path = append(path, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				break
			}
			path = append(path, part[i+1:i+j])
			part = part[i+j+1:]
		}
		if part != "" {
			path = append(path, part)
		}
	}
	return path
}
