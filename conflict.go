package fx

import (
	"regexp"
	"strings"
)

// Route conflicts are boot errors, reported once each and in fx's syntax.
//
// fasthttp/router reports a conflict by panicking with its own syntax
// ("'{name}' in new path '/users/{name}' conflicts with existing wild path
// '{id}'"), and a GET's automatic HEAD twin panicked a second time, so one
// mistake became two errors naming paths the application never wrote. fx
// now finds the common conflict itself (the same method and the same path
// shape, whatever the parameter names) and words it in ":name" syntax;
// any other panic of the router is rewritten into fx syntax by
// routerReason, and the HEAD twin of a GET that failed is not registered.

// routeShape is p with every parameter name dropped ("/users/:id" and
// "/users/:name" are both "/users/:"): two routes of one method with the
// same shape match the same requests.
func routeShape(p string) string {
	if strings.IndexByte(p, ':') < 0 && strings.IndexByte(p, '*') < 0 {
		return p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s != "" && (s[0] == ':' || s[0] == '*') {
			segs[i] = s[:1]
		}
	}
	return strings.Join(segs, "/")
}

// conflictError reports that method path matches the same requests as the
// earlier route method prev.
func conflictError(method, path, prev string) *Error {
	if path == prev {
		return configError(routeWhat(method, path), "registered twice")
	}
	return configError(routeWhat(method, path), "conflicts with %s %s, registered earlier", method, prev)
}

// routerPanicError reports a route the router refused for another reason.
func routerPanicError(method, path string, p any) *Error {
	return configError(routeWhat(method, path), "cannot be registered: %s", routerReason(formatValue(p)))
}

var (
	routerCatchAll = regexp.MustCompile(`\{([^{}:]+):\*\}`)
	routerParam    = regexp.MustCompile(`\{([^{}:]+)(:[^{}]*)?\}`)
)

// routerReason rewrites fasthttp/router's "{name}" and "{name:*}" into fx's
// ":name" and "*name".
func routerReason(s string) string {
	s = routerCatchAll.ReplaceAllString(s, "*$1")
	return routerParam.ReplaceAllString(s, ":$1")
}
