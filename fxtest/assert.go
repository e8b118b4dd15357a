package fxtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
)

// Every assertion calls t.Helper, reports a mismatch with t.Errorf (the
// test goes on, so one run shows every mismatch), quotes the response
// status, Content-Type and body (up to 4 KiB) in the message, and returns
// the Response for chaining. Only Do and Decode stop the test (t.Fatalf):
// without a response, or with an undecodable one, nothing useful follows.

// AssertStatus checks the status code.
func (r *Response) AssertStatus(status int) *Response {
	r.t.Helper()
	if r.Status != status {
		r.fail("status %d, want %d", r.Status, status)
	}
	return r
}

// AssertHeader checks that the first value of header name is want; an
// empty want checks that the header is absent.
func (r *Response) AssertHeader(name, want string) *Response {
	r.t.Helper()
	got, present := r.Header()[http.CanonicalHeaderKey(name)]
	switch {
	case want == "" && present:
		r.fail("header %s: %q, want none", name, got)
	case want != "" && !present:
		r.fail("header %s absent, want %q", name, want)
	case want != "" && got[0] != want:
		r.fail("header %s: %q, want %q", name, got[0], want)
	}
	return r
}

// AssertError checks that the response is the error envelope of the
// contract with this status and code: the status, Content-Type
// application/json, a body {"error":{"code":...,"message":...}} and the
// code.
func (r *Response) AssertError(status int, code string) *Response {
	r.t.Helper()
	r.assertError(status, code)
	return r
}

// assertError is AssertError, reporting whether the body is an envelope.
func (r *Response) assertError(status int, code string) (Envelope, bool) {
	r.t.Helper()
	if r.Status != status {
		r.fail("status %d, want %d (%s)", r.Status, status, code)
	}
	if ct := r.Header().Get("Content-Type"); ct != "application/json" {
		r.fail("Content-Type %q, want application/json (error %s)", ct, code)
	}
	if err := envelopeShape(r.Body); err != nil {
		r.fail("%s, want error %s", err, code)
		return Envelope{}, false
	}
	env, err := decodeEnvelope(r.Body)
	if err != nil {
		r.fail("%s, want error %s", err, code)
		return env, false
	}
	if env.Code != code {
		r.fail("error code %s, want %s", env.Code, code)
	}
	return env, true
}

// validationCode and validationStatus are those of a validation error.
const (
	validationCode   = "FX_VALIDATION_ERROR"
	validationStatus = 422
)

// AssertIssues checks that the response is a 422 FX_VALIDATION_ERROR whose
// issues are exactly want, in any order: every issue wanted is there, and
// no other. An Issue with an empty Message matches any message at its
// location and path. Use AssertIssuesInclude to check only some.
func (r *Response) AssertIssues(want ...Issue) *Response {
	r.t.Helper()
	r.assertIssues(want, true)
	return r
}

// AssertIssuesInclude is AssertIssues without the "no other" part: the
// issues wanted must be among the response's issues, which may hold more.
func (r *Response) AssertIssuesInclude(want ...Issue) *Response {
	r.t.Helper()
	r.assertIssues(want, false)
	return r
}

func (r *Response) assertIssues(want []Issue, exact bool) {
	r.t.Helper()
	env, ok := r.assertError(validationStatus, validationCode)
	if !ok {
		return
	}
	missing, extra := matchIssues(env.Issues, want)
	if len(missing) == 0 && (!exact || len(extra) == 0) {
		return
	}
	var b strings.Builder
	b.WriteString("validation issues differ")
	for _, is := range missing {
		fmt.Fprintf(&b, "\n  missing: %s", is)
	}
	if exact {
		for _, is := range extra {
			fmt.Fprintf(&b, "\n  unexpected: %s", is)
		}
	}
	r.fail("%s", b.String())
}

// matchIssues pairs each wanted issue with a distinct issue of got. Wanted
// issues with a message are paired first: they match only an identical
// issue, while one without a message matches any issue at its location
// and path, so pairing them last never takes an issue a specific one
// needed. It returns the wanted issues left unpaired and the issues of got
// left unpaired.
func matchIssues(got, want []Issue) (missing, extra []Issue) {
	used := make([]bool, len(got))
	order := slices.Clone(want)
	slices.SortStableFunc(order, func(a, b Issue) int {
		return boolInt(a.Message == "") - boolInt(b.Message == "")
	})
	for _, w := range order {
		found := false
		for i, g := range got {
			if !used[i] && g.Location == w.Location && g.Path == w.Path && (w.Message == "" || g.Message == w.Message) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	for i, g := range got {
		if !used[i] {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AssertJSON checks the status and that the body, decoded as JSON, equals
// want: a value encoded with encoding/json first (a struct, a map, a
// slice...), or JSON text given as a string, []byte or json.RawMessage.
// The comparison is of decoded values, so key order and spacing do not
// matter. On a mismatch the message shows a line diff of both values
// indented ("-" wanted, "+" got).
func (r *Response) AssertJSON(status int, want any) *Response {
	r.t.Helper()
	if r.Status != status {
		r.fail("status %d, want %d", r.Status, status)
	}
	wantJSON, err := jsonBytes(want)
	if err != nil {
		r.t.Errorf("%s: AssertJSON: encoding the wanted value: %v", r.request(), err)
		return r
	}
	var wv, gv any
	if err := json.Unmarshal(wantJSON, &wv); err != nil {
		r.t.Errorf("%s: AssertJSON: the wanted JSON does not decode: %v", r.request(), err)
		return r
	}
	if err := json.Unmarshal(r.Body, &gv); err != nil {
		r.fail("the body is not JSON: %v", err)
		return r
	}
	if !reflect.DeepEqual(wv, gv) {
		r.fail("JSON body differs (-want +got):\n%s", lineDiff(indent(wv), indent(gv)))
	}
	return r
}

// indent is v as indented JSON lines (encoding/json sorts object keys).
func indent(v any) []string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return strings.Split(string(b), "\n")
}

// lineDiff is a line diff of a and b (longest common subsequence), lines
// prefixed "- " (only in a), "+ " (only in b) or "  " (both). Quadratic in
// the number of lines: fine for test bodies.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + a[i] + "\n")
			i++
		default:
			out.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return out.String()
}
