//go:build clients

package live

// Compiles only if both Go clients typed examples/orders' responses: the
// 201's id and Location always sent, each error's code an enum, its
// message a string, its details typed per code (a sum type, or a union
// with a discriminator, where one status has two kinds of details), and
// details.reason an enum of the reasons the code carries.

import (
	"testing"

	oapi "github.com/fxhq/fx/scripts/openapi-clients/gen/oapi/orders"
	ogen "github.com/fxhq/fx/scripts/openapi-clients/gen/ogen/orders"
	"github.com/go-faster/jx"
)

var (
	_ string                                                       = ogen.PostOrdersCreatedHeaders{}.Location
	_ string                                                       = ogen.PostOrdersCreated{}.ID
	_ ogen.PostOrders400ErrorFxIdempotencyKeyRequiredCode          = ogen.PostOrders400ErrorFxIdempotencyKeyRequired{}.Code
	_ ogen.PostOrders400ErrorFxIdempotencyKeyRequiredDetailsReason = ogen.PostOrders400ErrorFxIdempotencyKeyRequired{}.Details.Reason
	_                                                              = ogen.PostOrders400ErrorError{}.GetPostOrders400ErrorFxTenantRequired
	_ []ogen.ValidationIssue                                       = ogen.PostOrders422ErrorFxValidationError{}.Details.Issues
	_ ogen.PostOrders422ErrorFxIdempotencyKeyReusedDetailsReason   = ogen.PostOrders422ErrorFxIdempotencyKeyReused{}.Details.Reason
	_ ogen.GetOrdersById404ErrorErrorCode                          = ogen.GetOrdersById404ErrorError{}.Code
	_ string                                                       = ogen.GetOrdersById404ErrorError{}.Message
	_ ogen.PostOrders409ErrorErrorCode                             = ogen.PostOrders409ErrorError{}.Code
	_                                                              = ogen.PostOrders422ErrorError{}.GetPostOrders422ErrorFxValidationError
	_ oapi.PostOrders400ErrorFxIdempotencyKeyRequiredCode          = oapi.PostOrders400ErrorFxIdempotencyKeyRequired{}.Code
	_ string                                                       = oapi.PostOrders400ErrorFxIdempotencyKeyRequired{}.Message
	_ oapi.PostOrders400ErrorFxIdempotencyKeyRequiredDetailsReason = oapi.PostOrders400ErrorFxIdempotencyKeyRequired{}.Details.Reason
	_                                                              = oapi.PostOrders400Error_Error.AsPostOrders400ErrorFxTenantRequired
	_ []oapi.ValidationIssue                                       = oapi.PostOrders422ErrorFxValidationError{}.Details.Issues
	_ oapi.PostOrders422ErrorFxIdempotencyKeyReusedDetailsReason   = oapi.PostOrders422ErrorFxIdempotencyKeyReused{}.Details.Reason
	_ oapi.GetOrdersById404ErrorErrorCode                          = oapi.GetOrdersById404Error{}.Error.Code
	_ *oapi.PostOrders422Error                                     = oapi.PostOrdersResponse{}.JSON422
	_                                                              = oapi.PostOrders422Error_Error.AsPostOrders422ErrorFxValidationError
	_                                                              = oapi.PostOrders422Error_Error.Discriminator
)

// TestListsNeverNull: examples/orders lists its orders and their lines
// with a typed operation, which never sends null for them, and the
// document says so: ogen's client types them as non-nullable arrays and
// its decoder refuses a null there (a nullable array would read as nil).
func TestListsNeverNull(t *testing.T) {
	order := func(lines string) string {
		return `{"id":"o1","customer":"ada","created":"2026-01-01T00:00:00Z","status":"open","lines":` + lines + `}`
	}
	decode := func(body string) error {
		var list ogen.GetOrdersOK
		return list.Decode(jx.DecodeStr(body))
	}
	for _, body := range []string{`{"orders":null}`, `{"orders":[` + order("null") + `]}`} {
		if decode(body) == nil {
			t.Errorf("ogen decoded %s: a list documented nullable", body)
		}
	}
	for _, body := range []string{`{"orders":[]}`, `{"orders":[` + order("[]") + `]}`} {
		if err := decode(body); err != nil {
			t.Errorf("ogen refused %s: %v", body, err)
		}
	}
}
