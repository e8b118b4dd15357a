package bench

import (
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// NewRawTyped is the typed endpoint's floor: a hand-written fasthttp
// handler that decodes the body with goccy/go-json (fx's decoder) into a
// TypedOrder, runs CheckTypedOrder and writes the 201 or the 422 as
// NewRaw writes its answers.
func NewRawTyped(int) Impl {
	return Impl{FastHTTP: func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) != TypedPath || !ctx.IsPost() {
			rawNotFound(ctx)
			return
		}
		var o TypedOrder
		if err := json.Unmarshal(ctx.PostBody(), &o); err != nil {
			rawIssues(ctx, []Issue{{"body", []string{}, MsgBadJSON}})
			return
		}
		if issues := CheckTypedOrder(&o); len(issues) > 0 {
			rawIssues(ctx, issues)
			return
		}
		rawJSON(ctx, 201, &o)
	}}
}
