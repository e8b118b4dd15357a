package validate

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	json "github.com/goccy/go-json"
)

// The one-pass decoder (typeDecoder.Decode) must answer exactly what the
// path it replaced answers: CheckJSON's error, then (the type scan
// passing) go-json's decode of the whole body and the constraint plan, or
// the issues of the byte walk. The old path is kept here as the oracle:
// the same error, the same issues in the same order, the same decoded
// value.

// decodeTypes are fitTypes plus types with constraint tags, pointers,
// nested slices and embedded structs.
var decodeTypes = func() map[string]reflect.Type {
	m := map[string]reflect.Type{
		"rules":    reflect.TypeFor[decodeRules](),
		"embedded": reflect.TypeFor[decodeEmbedded](),
		"pointers": reflect.TypeFor[decodePointers](),
		"shadow":   reflect.TypeFor[decodeShadow](),
		"folds":    reflect.TypeFor[decodeFolds](),
	}
	for k, v := range fitTypes {
		m[k] = v
	}
	return m
}()

type decodeRules struct {
	Name  string            `json:"name" validate:"required,min=2,max=8"`
	Tags  []string          `json:"tags" validate:"max=3,dive,alphanum"`
	Score *float32          `json:"score" validate:"omitempty,gte=0,lte=10"`
	Level uint16            `json:"level" validate:"lte=300"`
	Items []benchTypedLine  `json:"items" validate:"dive"`
	Meta  map[string]string `json:"meta"`
	Next  *decodeRules      `json:"next"`
}

type decodeBase struct {
	ID   int64  `json:"id" validate:"gte=1"`
	Note string `json:"note"`
}

type decodeEmbedded struct {
	decodeBase
	Title string   `json:"title" validate:"required"`
	Grid  [][]int8 `json:"grid"`
	Flags []bool   `json:"flags"`
}

type decodePointers struct {
	S  *string         `json:"s"`
	PP **int           `json:"pp"`
	L  []*decodeBase   `json:"l"`
	E  *decodeEmbedded `json:"e"`
	*decodeBase
}

type decodeShadowInner struct {
	Name string `json:"name"`
}

type decodeShadow struct {
	decodeShadowInner
	Name string `json:"name"`
	N    uint8  `json:"n"`
}

// decodeFoldsInner is embedded in decodeFolds: its "TITLE" differs from
// the outer "title" only by case, and comes first in the Go field order.
type decodeFoldsInner struct {
	Up  int    `json:"TITLE"`
	Sub string `json:"sub"`
}

// decodeRefuser is a json.Unmarshaler that refuses everything.
type decodeRefuser struct{}

func (*decodeRefuser) UnmarshalJSON([]byte) error { return errors.New("refused") }

// decodeFolds has keys a body may match only ignoring case: two fields
// differing only in case, one that an embedded field matches ignoring
// case too, one of a multi-byte name, and values of every kind the pass
// writes, merged when a second key names the field again.
type decodeFolds struct {
	decodeFoldsInner
	Name   string            `json:"name" validate:"omitempty,min=2"`
	NAME   string            `json:"NAME"`
	Title  string            `json:"title"`
	Kelvin uint8             `json:"kelvin"`
	Ok     bool              `json:"ok"`
	N      int32             `json:"n"`
	Big    int64             `json:"big"`
	Tags   []int             `json:"tags"`
	Sub    *decodeFoldsNest  `json:"nest"`
	Line   decodeFoldsNest   `json:"line"`
	Lines  []decodeFoldsNest `json:"lines"`
	Ref    decodeRefuser     `json:"ref"`
}

type decodeFoldsNest struct {
	A string `json:"a"`
	B int    `json:"b"`
}

var decodeBodies = []string{
	`{"Name":"ab"}`, `{"name":"ab","NAME":"cd"}`, `{"nAmE":"ab"}`, `{"NAME":"ab","Name":"cd","name":"ef"}`,
	`{"Title":1}`, `{"Title":"t"}`, `{"title":"t","TiTlE":2}`, `{"TITLE":3,"Title":4}`,
	"{\"\u212aelvin\":7}", "{\"\u212aELVIN\":7,\"kelvin\":8}", `{"OK":true,"ok":false}`, `{"OK":true,"Ok":null}`,
	`{"NEST":{"a":"x","b":1},"nest":{"b":2}}`, `{"nest":{"a":"x"},"Nest":null}`, `{"LINE":{"a":"x"},"line":{"b":2}}`,
	`{"line":{"a":"x"},"LINE":{"a":""}}`, `{"lines":[{"a":"x"},{"b":1}],"LINES":[{"b":2}]}`, `{"TAGS":[1,2],"tags":[3]}`,
	`{"line":{"A":"x","a":"y"}}`, `{"lines":[{"B":2.0}]}`, `{"Tags":[1,2e0]}`, `{"nest":{"B":1.5}}`,
	`{"n":2.0}`, `{"n":1e2}`, `{"n":1.5}`, `{"n":1e400}`, `{"n":-0.0}`, `{"n":1e10}`, `{"N":20e-1}`, `{"big":1E2}`,
	`{"big":1234567890123456}`, `{"big":9007199254740993}`, `{"big":-9007199254740993}`, `{"big":9007199254740994}`,
	`{"kelvin":-0}`, `{"kelvin":-0.0}`, `{"kelvin":255.0}`, `{"kelvin":256.0}`, `{"KELVIN":1.0,"n":"x"}`,
	`{"ref":1}`, `{"REF":1}`, `{"ref":1,"n":2.0}`, `{"n":2.0,"ref":1}`, `{"ref":1,"n":"x"}`, `{"Ref":null}`,
	`{"Name":"a","n":1e2}`, `{"name":"ab","NAME":"a","n":1}`, `{"sub":"s","SUB":"t"}`,

	`{"name":"ab","tags":["a1","b2"],"score":2.5,"level":300,"items":[{"sku":"abc","qty":3}],"meta":{"k":"v"}}`,
	`{"name":"a","tags":["a","b","c","d"],"score":11,"level":301,"items":[{"sku":"a!","qty":0}]}`,
	`{"name":"ab","next":{"name":"cd","next":{"name":"x"}}}`, `{"name":"ab","score":null}`,
	`{"name":"ab\u0000c\ud800x\ud83d\ude00"}`, `{"name":"ab","tags":["\u0041\u00e9"]}`,
	`{"id":3,"note":"n","title":"t","grid":[[1,2],[],[3,4,5,6,7,8,9]],"flags":[true,false,true,true,false]}`,
	`{"id":0,"title":""}`, `{"id":1.0,"title":"t"}`, `{"grid":[[128]]}`, `{"grid":[[1,"x"]]}`,
	`{"s":"x","pp":5,"l":[{"id":1},null,{"id":2}],"e":{"id":4,"title":"z"},"id":7,"note":"q"}`,
	`{"s":null,"pp":null,"l":null,"e":null}`, `{"pp":"x"}`, `{"name":"x","n":3}`, `{"n":256}`,
	`{"flags":[true,false,true,true,false,true,true,true,true,false,true,true,true,true,true,true,true,true]}`,
	`{"name":"` + strings.Repeat("é", 3000) + `","tags":["` + strings.Repeat("b", 2000) + `"]}`,
	`{"Name":"ab","NAME":"cd"}`, `{"name":"ab","NaMe":"cd"}`, `{"id":1,"ID":2}`, `{"title":"t","Title":"u"}`,
}

// oracleDecode is the path the one-pass decoder replaced: CheckJSON, the
// type scan, then go-json's decode of the whole body and the rule plan,
// or the error path's issues.
func oracleDecode(td *typeDecoder, body []byte, max int) (v reflect.Value, issues []Issue, err error) {
	if err := CheckJSON(body); err != nil {
		return reflect.Value{}, nil, err
	}
	v = reflect.New(td.t)
	var decErr error
	if treeFits(td.d, body) {
		if decErr = json.Unmarshal(body, v.Interface()); decErr == nil {
			return v, td.plan.run(v.UnsafePointer(), nil, max, nil), nil
		}
	}
	st := newState(false, max)
	typeIssues(td.d, body, st)
	if len(st.issues) > 0 {
		return reflect.Value{}, lenientRules(td.d, td.plan, td.t, false, treeOf(body, td.plan, st.issues, max), st.issues, max), nil
	}
	if decErr == nil {
		decErr = errors.New("validate: body refused by the decoder")
	}
	return reflect.Value{}, []Issue{decodeIssue(decErr)}, nil
}

func assertDecodesLikeOracle(t *testing.T, name string, td *typeDecoder, body []byte, max int) {
	t.Helper()
	want, wantIssues, wantErr := oracleDecode(td, body, max)
	got := reflect.New(td.t)
	issues, err := td.Decode(body, got.Interface(), max)
	if !reflect.DeepEqual(err, wantErr) || !reflect.DeepEqual(issues, wantIssues) {
		t.Fatalf("%s %q (max %d):\n one pass: issues=%q err=%v\n old path: issues=%q err=%v", name, body, max, issues, err, wantIssues, wantErr)
	}
	if want.IsValid() && !reflect.DeepEqual(got.Interface(), want.Interface()) {
		t.Fatalf("%s %q:\n one pass decoded %#v\n old path decoded %#v", name, body, got.Elem().Interface(), want.Elem().Interface())
	}
}

func decodersOf(t testing.TB) map[string]*typeDecoder {
	out := map[string]*typeDecoder{}
	for name, typ := range decodeTypes {
		td, err := compileType(typ)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = td
	}
	return out
}

// decodeCorpus is the body corpus of the oracle tests and the seeds of
// their fuzz targets: fitBodies, decodeBodies, and for each n of ns an
// object of n unknown keys (manyKeys), then the same with its first key
// repeated.
func decodeCorpus(ns ...int) []string {
	bodies := slices.Concat(fitBodies, decodeBodies)
	for _, n := range ns {
		bodies = append(bodies, manyKeys(n, false), manyKeys(n, true))
	}
	return bodies
}

func TestDecodeMatchesOldPath(t *testing.T) {
	t.Parallel()
	for name, td := range decodersOf(t) {
		for _, body := range decodeCorpus(5, 31, 32, 33, 40, 100) {
			for _, max := range []int{0, 1, 3} {
				assertDecodesLikeOracle(t, name, td, []byte(body), max)
			}
		}
	}
}

// TestDecodeRandom holds the one pass to the old path on bodies
// generated from the types: well typed, then with one byte changed.
func TestDecodeRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for name, td := range decodersOf(t) {
		eachGenerated(r, td.d, 3000, 400, func(body []byte, mutated bool) {
			max := 0
			if mutated {
				max = 2
			}
			assertDecodesLikeOracle(t, name, td, body, max)
		})
	}
}

// TestDecodedStringsOutliveTheBody: no string the decoder writes aliases
// the body, which fx reuses once the request ends.
func TestDecodedStringsOutliveTheBody(t *testing.T) {
	td := must(compileType(reflect.TypeFor[decodeRules]()))
	for _, body := range []string{
		`{"name":"abcd","tags":["x1","y\u0041"],"meta":{"k":"v"},"next":{"name":"zz"}}`,
		`{"name":"abcd","tags":["` + strings.Repeat("x", 5000) + `"]}`, // past arenaMax: a copy each
	} {
		// no room, room for some of the strings (the rest in a buffer of
		// their own), room for all (fx.Op's, allocated with its input)
		for _, room := range [][]byte{nil, make([]byte, 0, 7), make([]byte, 0, 8192)} {
			buf := []byte(body)
			var v decodeRules
			if issues, err := td.DecodeAt(buf, unsafe.Pointer(&v), room, 0); err != nil || issues != nil {
				t.Fatalf("%q: %v %v", body, issues, err)
			}
			var want decodeRules
			if issues, err := td.Decode([]byte(body), &want, 0); err != nil || issues != nil {
				t.Fatal(issues, err)
			}
			for i := range buf {
				buf[i] = '#'
			}
			if !reflect.DeepEqual(v, want) {
				t.Fatalf("room of %d: overwriting the body changed the decoded value: %#v", cap(room), v)
			}
		}
	}
}

// FuzzDecode holds the one-pass decoder to the old path on any body, for
// every type of decodeTypes. Its seed corpus is the bodies above.
func FuzzDecode(f *testing.F) {
	fuzzDecoders(f, func(t *testing.T, name string, td *typeDecoder, body []byte) {
		assertDecodesLikeOracle(t, name, td, body, 3)
	})
}

// fuzzDecoders is the fuzz target of an oracle test: seeded with
// decodeCorpus, it runs check on each body for every type of
// decodeTypes.
func fuzzDecoders(f *testing.F, check func(t *testing.T, name string, td *typeDecoder, body []byte)) {
	for _, b := range decodeCorpus() {
		f.Add(b)
	}
	tds := decodersOf(f)
	f.Fuzz(func(t *testing.T, body string) {
		for name, td := range tds {
			check(t, name, td, []byte(body))
		}
	})
}

// keyNames is a struct whose JSON names the one pass's key matching must
// tell apart: one name a prefix of another, names of 1, 7, 8 and 9 bytes
// (a name of 8 bytes sharing its first eight with a longer one), and a
// name of multi-byte characters.
type keyNames struct {
	A     int `json:"a"`
	Em    int `json:"em"`
	Email int `json:"email"`
	Seven int `json:"seven_7"`
	Cust  int `json:"customer"`
	Custs int `json:"customers"`
	Name  int `json:"名前"`
}

// TestMatchKeyIsExact holds the word comparison of the one pass's key
// matching to the scan and string comparison it stands for: a key it
// matches is the field d.exact names and ends where the scan ends; a key
// it does not match (an escaped spelling of a name included) names no
// field, or stands too near the end of the body to be compared by words.
func TestMatchKeyIsExact(t *testing.T) {
	n := dplanOf(reflect.TypeFor[keyNames]())
	if n.keys == nil {
		t.Fatal("no key table for a struct of 7 fields")
	}
	var keys []string // as written in the body, between the quotes
	for _, f := range n.d.fields {
		keys = append(keys, f.name, f.name+"x", f.name[:len(f.name)-1], strings.ToUpper(f.name), f.name+`\"`)
	}
	keys = append(keys, "", "emaik", "customez", `emai\u006c`, `em\"ail`, "seven_7\\")
	for _, raw := range keys {
		want := -1
		if !strings.Contains(raw, `\`) {
			want = n.d.exact(raw)
		}
		for pad := 0; pad <= 10; pad++ {
			data := []byte(`"` + raw + `"` + strings.Repeat(" ", pad))
			i, end := n.matchKey(data, 0)
			switch {
			case i >= 0 && (i != want || end != len(raw)+2):
				t.Errorf("key %q followed by %d bytes: field %d ending at %d, want field %d ending at %d", raw, pad+1, i, end, want, len(raw)+2)
			case i < 0 && end != 0:
				t.Errorf("key %q followed by %d bytes: no match, but read up to %d", raw, pad+1, end)
			case i < 0 && want >= 0 && len(data) >= 9:
				t.Errorf("key %q followed by %d bytes: not matched, want field %d", raw, pad+1, want)
			}
		}
	}
}

// oddNames has JSON names a key cannot hold as they stand: matchKey must
// not read them (a body's `"a\b"` is the key "a" and a backspace, and
// `"q"x"` is no key at all).
type oddNames struct {
	//lint:ignore SA5008 the odd name is what the test is about
	Esc int `json:"a\\b"`
	//lint:ignore SA5008 the odd name is what the test is about
	Quote int `json:"q\"x"`
	//lint:ignore SA5008 the odd name is what the test is about
	Bad int `json:"\xff"`
}

// TestOddNamesAreScanned holds a struct whose field names are not plain
// key text to the scan of its keys: its bodies decode as the former path
// decodes them.
func TestOddNamesAreScanned(t *testing.T) {
	td, err := compileType(reflect.TypeFor[oddNames]())
	if err != nil {
		t.Fatal(err)
	}
	if td.dec.keys != nil {
		t.Error("a key table for names a key cannot hold as they stand")
	}
	for _, body := range []string{`{"a\b":1}`, `{"q"x":3}`, "{\"\xff\":5}", `{"\u00ff":6}`} {
		// padded: a key is matched only when eight bytes follow its quote
		assertDecodesLikeOracle(t, "oddNames", td, []byte(body+"        "), 0)
	}
}

// TestPassDecidesFoldsAndIntegers: the bodies the pass once left to a
// second decode of the whole body (a key matching a field only ignoring
// case, an integer written with a fraction or an exponent, a plain
// integer of 16 digits) are decided by the pass itself: decoded, or
// refused with the issue go-json's reading gives (a *refusal), never
// handed on undecided.
func TestPassDecidesFoldsAndIntegers(t *testing.T) {
	td := must(compileType(reflect.TypeFor[decodeFolds]()))
	for body, want := range map[string]string{
		`{"Name":"ab"}`:                         "decoded",
		`{"name":"ab","NAME":"cd","Name":"ef"}`: "decoded",
		`{"TITLE":3,"Title":4}`:                 "decoded",
		`{"NEST":{"a":"x"},"nest":{"b":2}}`:     "decoded",
		`{"big":1234567890123456}`:              "decoded",
		`{"n":2.0}`:                             "refused",
		`{"n":1e2}`:                             "refused",
		`{"lines":[{"B":2.0}]}`:                 "refused",
		`{"kelvin":-0}`:                         "refused",
		`{"ref":1}`:                             "refused",
		`{"n":1.5}`:                             "misfit",
		`{"n":1e400}`:                           "misfit",
	} {
		v := new(decodeFolds)
		got := "decoded"
		switch _, err := td.dec.pass([]byte(body), unsafe.Pointer(v), nil, false); err.(type) {
		case nil:
		case *refusal:
			got = "refused"
		default:
			got = "misfit"
		}
		if got != want {
			t.Errorf("%s: the pass %s it, want %s", body, got, want)
		}
	}
	// what the pass wrote is what go-json writes
	var got, want decodeFolds
	body := []byte(`{"NEST":{"a":"x","b":1},"nest":{"b":2},"LINE":{"a":"y"},"line":{"b":3},"Name":"ab","name":"cd","big":1234567890123456}`)
	if _, err := td.dec.pass(body, unsafe.Pointer(&got), nil, false); err != nil || json.Unmarshal(body, &want) != nil {
		t.Fatal("not decoded")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pass %+v, go-json %+v", got, want)
	}
}
