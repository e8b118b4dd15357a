package bench

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// typedCase is a request to the typed endpoint and what every
// implementation must answer: the status, and for a 201 the body, for a
// 422 the set of issue locations and paths (the messages are each
// framework's own words).
type typedCase struct {
	name, body string
	status     int
	want       string   // 201: the body, compared after decoding
	issues     []string // 422: "location path.to.field", sorted
}

var typedCases = []typedCase{
	{name: "valid", body: TypedValid, status: 201, want: TypedValid},
	{name: "valid-no-email", body: `{"customer":"Bob","lines":[{"sku":"XYZ","qty":100}]}`, status: 201,
		want: `{"customer":"Bob","lines":[{"sku":"XYZ","qty":100}]}`},
	{name: "invalid", body: TypedInvalid, status: 422,
		issues: []string{"body customer", "body email", "body lines.0.qty", "body lines.0.sku", "body lines.1.qty"}},
	{name: "no-lines", body: `{"customer":"Bob","lines":[]}`, status: 422, issues: []string{"body lines"}},
	{name: "too-long", body: `{"customer":"` + strings.Repeat("é", 81) + `","lines":[{"sku":"ab","qty":1}]}`, status: 422,
		issues: []string{"body customer", "body lines.0.sku"}},
}

// TestTypedEquivalence checks that every implementation of the typed
// endpoint answers each case alike: the same status, the same body for a
// 201, the envelope with the same issue set for a 422.
func TestTypedEquivalence(t *testing.T) {
	for _, fw := range TypedFrameworks {
		impl := fw.New(0)
		for _, tc := range typedCases {
			t.Run(fw.Name+"/"+tc.name, func(t *testing.T) {
				r := newRunner(t, impl, "POST", TypedPath, tc.body)
				r.do()
				checkTyped(t, tc, r.status(), r.body())
			})
		}
	}
}

func checkTyped(t *testing.T, tc typedCase, status int, body []byte) {
	t.Helper()
	if status != tc.status {
		t.Fatalf("status %d, want %d (body %s)", status, tc.status, body)
	}
	if tc.status != 422 {
		var got, want any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("body is not JSON: %v: %q", err, body)
		}
		_ = json.Unmarshal([]byte(tc.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("body\n got %s\nwant %s", body, tc.want)
		}
		return
	}
	code, got, err := issueSet(body)
	if err != nil {
		t.Fatalf("body is not an envelope: %v: %q", err, body)
	}
	if code != CodeValidation {
		t.Errorf("code %q, want %s (body %s)", code, CodeValidation, body)
	}
	if !slices.Equal(got, tc.issues) {
		t.Errorf("issues %q, want %q (body %s)", got, tc.issues, body)
	}
}

// issueSet reads an error envelope: its code and its issues as sorted
// "location path.to.field" strings.
func issueSet(body []byte) (code string, issues []string, err error) {
	var env struct {
		Error struct {
			Code    string `json:"code"`
			Details struct {
				Issues []Issue `json:"issues"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return "", nil, err
	}
	for _, is := range env.Error.Details.Issues {
		issues = append(issues, is.Location+" "+strings.Join(is.Path, "."))
	}
	slices.Sort(issues)
	return env.Error.Code, issues, nil
}

// BenchmarkTyped runs the typed endpoint's valid and 422 requests against
// every implementation in process. Names are
// BenchmarkTyped/<endpoint>/<framework>; cmd/table tabulates them with
// BenchmarkService's.
func BenchmarkTyped(b *testing.B) {
	for _, ep := range TypedEndpoints {
		for _, fw := range TypedFrameworks {
			b.Run(ep.Name+"/"+fw.Name, func(b *testing.B) {
				benchEndpoint(b, fw.New(0), ep)
			})
		}
	}
}
