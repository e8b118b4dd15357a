package fx

import "testing"

// TestRouterReasonInFxSyntax: a panic text of fasthttp/router that fx does
// not pre-empt still reaches the boot error in fx's syntax.
func TestRouterReasonInFxSyntax(t *testing.T) {
	for in, want := range map[string]string{
		"'{name}' in new path '/users/{name}' conflicts with existing wild path '{id}' in existing prefix '/users/{id}'": "':name' in new path '/users/:name' conflicts with existing wild path ':id' in existing prefix '/users/:id'",
		"'{b:*}' in new path '/f/{b:*}' conflicts with existing wildcard '{a:*}' in existing prefix '/f/{a:*}'":          "'*b' in new path '/f/*b' conflicts with existing wildcard '*a' in existing prefix '/f/*a'",
		"a handler is already registered for path '/dup'":                                                                "a handler is already registered for path '/dup'",
	} {
		if got := routerReason(in); got != want {
			t.Errorf("routerReason(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}
