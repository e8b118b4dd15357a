package openapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/openapi"
)

// Paging is the paging of every list: embedded in an input, its fields
// are the input's own (as encoding/json flattens an embedded struct).
type Paging struct {
	Limit  int    `query:"limit" validate:"min=1,max=100" default:"20" doc:"Items per page"`
	Cursor string `query:"cursor" doc:"Where the previous page ended"`
}

// ListItems is a list endpoint's input, in tags only.
type ListItems struct {
	Paging
	Q *string `query:"q" validate:"omitempty,min=2" doc:"Search text; absent: every item"`
}

type itemPage struct {
	Items []string `json:"items"`
	Limit int      `json:"limit"`
	Q     string   `json:"q,omitempty"`
}

func listApp() *fx.App {
	app := fx.New()
	fx.Op(app, "GET", "/items", func(c *fx.Ctx, in *ListItems) (*itemPage, error) {
		out := &itemPage{Items: []string{}, Limit: in.Limit}
		if in.Q != nil {
			out.Q = *in.Q
		}
		return out, nil
	})
	openapi.Mount(app, openapi.Config{Title: "Items"})
	return app
}

// A list endpoint written in tags only: limit 1..100 with default 20 is
// one tag line, q is optional (a pointer: nil when absent), and the
// paging struct is embedded. The document says what the server does.
func Example_listEndpoint() {
	app := listApp()
	get := func(target string) string {
		resp, err := app.Test(httptest.NewRequest("GET", target, nil))
		if err != nil {
			return err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprint(resp.StatusCode, " ", string(b))
	}
	fmt.Println(get("/items"))
	fmt.Println(get("/items?limit=5&q=tea"))
	fmt.Println(get("/items?limit=0"))
	fmt.Println(get("/items?limit=500"))
	var doc map[string]any
	json.Unmarshal([]byte(strings.SplitN(get("/openapi.json"), " ", 2)[1]), &doc)
	op := doc["paths"].(map[string]any)["/items"].(map[string]any)["get"].(map[string]any)
	params, _ := json.MarshalIndent(op["parameters"], "", "  ")
	fmt.Println(string(params))
	// Output:
	// 200 {"items":[],"limit":20}
	// 200 {"items":[],"limit":5,"q":"tea"}
	// 422 {"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[{"location":"query","path":["limit"],"message":"Must be at least 1"}]}}}
	// 422 {"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[{"location":"query","path":["limit"],"message":"Must be at most 100"}]}}}
	// [
	//   {
	//     "in": "query",
	//     "name": "cursor",
	//     "schema": {
	//       "description": "Where the previous page ended",
	//       "type": "string"
	//     }
	//   },
	//   {
	//     "in": "query",
	//     "name": "limit",
	//     "schema": {
	//       "default": 20,
	//       "description": "Items per page",
	//       "format": "int64",
	//       "maximum": 100,
	//       "minimum": 1,
	//       "type": "integer"
	//     }
	//   },
	//   {
	//     "in": "query",
	//     "name": "q",
	//     "schema": {
	//       "description": "Search text; absent: every item",
	//       "minLength": 2,
	//       "type": "string"
	//     }
	//   }
	// ]
}
