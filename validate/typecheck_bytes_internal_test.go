package validate

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The strict walk (typecheck_bytes.go), which checks the values the one-pass decoder
// leaves to go-json and lists the type issues of a body, must answer
// exactly what the two passes answer: CheckJSON's error, and the type
// check of the decoded tree (checkType, its issues and their order)
// over a body CheckJSON accepted. The two are the oracle; checkFits runs
// the walk over a whole body.

// checkFits walks body as the strict walk walks a value: err is exactly
// CheckJSON(body), and with a nil err fits reports whether checkType
// finds no issue in DecodeJSON(body).
func checkFits(d *tdesc, body []byte) (fits bool, err error) {
	p := getParser(body, false)
	p.skipSpace()
	err = p.fit(d.typed())
	p.skipSpace()
	if err == nil && p.pos < len(p.data) {
		err = errMisfit // trailing data
	}
	putParser(p)
	if err != nil {
		return false, CheckJSON(body)
	}
	return true, nil
}

// fitsOnly is checkFits's answer alone.
func fitsOnly(d *tdesc, body []byte) bool {
	ok, _ := checkFits(d, body)
	return ok
}

func oracleFits(d *tdesc, body []byte) (bool, error) {
	if err := CheckJSON(body); err != nil {
		return false, err
	}
	return treeFits(d, body), nil
}

// treeFits is the oracle of fits: the type check of the decoded tree.
func treeFits(d *tdesc, body []byte) bool {
	v, err := DecodeJSON(body)
	if err != nil {
		return false
	}
	var st state
	checkType(d, v, &st)
	return len(st.issues) == 0
}

type fitKinds struct {
	S    string            `json:"s"`
	T    net.IP            `json:"t"` // encoding.TextUnmarshaler
	B    []byte            `json:"b"`
	When time.Time         `json:"when"`
	OK   bool              `json:"ok"`
	I8   int8              `json:"i8"`
	I16  int16             `json:"i16"`
	I32  int32             `json:"i32"`
	I64  int64             `json:"i64"`
	U8   uint8             `json:"u8"`
	U    uint              `json:"u"`
	F32  float32           `json:"f32"`
	F64  float64           `json:"f64"`
	Arr  [2]int            `json:"arr"`
	List []fitKinds        `json:"list"`
	M    map[string]int    `json:"m"`
	Any  any               `json:"any"`
	Raw  json.RawMessage   `json:"raw"`
	Str  int               `json:"str,string"`
	P    *fitKinds         `json:"p"`
	MS   map[string]string `json:"ms"`
	Keys map[int]string    `json:"keys"`
	fitEmbedded
}

type fitEmbedded struct {
	Inner string `json:"inner"`
	Name  string // matched ignoring case, as go-json does
}

// wideStruct has more fields than typecheck_bytes.go's bit set (64) and than the
// short list of tdesc.exact (8).
var wideStruct = func() reflect.Type {
	var fs []reflect.StructField
	for i := range 70 {
		fs = append(fs, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[int](),
			Tag: reflect.StructTag(fmt.Sprintf(`json:"f%d"`, i))})
	}
	return reflect.StructOf(fs)
}()

var fitTypes = map[string]reflect.Type{
	"kinds":  reflect.TypeFor[fitKinds](),
	"typed":  reflect.TypeFor[benchTyped](),
	"wide":   wideStruct,
	"slice":  reflect.TypeFor[[]benchTypedLine](),
	"map":    reflect.TypeFor[map[string][]int](),
	"any":    reflect.TypeFor[any](),
	"string": reflect.TypeFor[string](),
}

var fitBodies = []string{
	string(benchTypedValid),
	`{"customer":"a","customer":"b"}`,
	`{"customer":"a","\u0063ustomer":"b"}`,
	`{"Customer":"a","customer":"b"}`,
	`{"x":1,"x":2}`, `{"x":1,"X":2}`, `{"x":1,"\u0078":2}`,
	`{"lines":[{"sku":"a","qty":1.5}]}`, `{"lines":[{"sku":"a","qty":2.0}]}`,
	`{"lines":[{"qty":1e2}]}`, `{"lines":[{"qty":-0}]}`, `{"lines":[{"qty":9007199254740993}]}`,
	`{"lines":[{"qty":123456789012345}]}`, `{"lines":[{"qty":1234567890123456}]}`,
	`{"lines":[{"qty":1}],"lines":[]}`, `{"lines":[{"qty":1},]}`, `{"lines":[{"qty":1}]`,
	`{"lines":[{"qty":"1"}], "x": [1,]}`, `{"lines":{"qty":1}}`, `{"lines":null}`, `null`, ` {} `, `{}x`,
	`{"s":"a\u00e9","t":"127.0.0.1","b":"aGk=","when":"2024-01-02T03:04:05Z","ok":true}`,
	`{"b":"!!"}`, `{"when":"yesterday"}`, `{"when":"2024-01-02T03:04:05\u005a"}`, `{"b":"aG\u006b="}`,
	`{"i8":127,"i16":-32768,"i32":2147483647,"i64":-9007199254740992,"u8":255,"u":0}`,
	`{"i8":128}`, `{"i16":-32769}`, `{"u8":-1}`, `{"u8":256}`, `{"u":-0.0}`, `{"i64":9007199254740993}`,
	`{"f32":3.5e38}`, `{"f32":3.4e38}`, `{"f64":1e309}`, `{"f64":-1e308}`, `{"f64":` + strings.Repeat("9", 309) + `}`,
	`{"f64":` + strings.Repeat("9", 308) + `}`, `{"i64":` + strings.Repeat("9", 400) + `}`,
	`{"arr":[1,2,3]}`, `{"arr":[1,"2"]}`, `{"m":{"a":1,"a":2}}`, `{"m":{"a":1.5}}`, `{"ms":{"a":"x","b":1}}`,
	`{"any":{"a":[1,{"b":2,"b":3}]}}`, `{"any":[1,2,}`, `{"raw":{"x":1,"x":1}}`, `{"raw":[true]}`,
	`{"str":"12"}`, `{"str":12}`, `{"keys":{"1":"a"}}`, `{"p":{"p":{"s":1}}}`, `{"p":null}`,
	`{"inner":"x","name":"y","NAME":"z"}`, `{"name":1}`, `{"list":[{"list":[{"i8":1000}]}]}`,
	"{\"s\":\"\xff\"}", "{\"\xff\":1}", "{\"s\":\"\x01\"}", `{"s":"\x"}`, `{"s":tru}`, `{"ok":nul}`,
	`{"f0":1,"f69":2,"f69":3}`, `{"f0":1,"f1":1,"f2":1,"f3":1,"f4":1,"f5":1,"f6":1,"f7":1,"f8":1,"f9":1,"F9":1,"f68":1.5}`,
	`[{"sku":"a"},{"sku":1}]`, `[]`, `[ ]`, `{"a":[1,2],"b":[]}`, `{"a":[1,"x"]}`, `"x"`, `1`, ``, `   `,
	strings.Repeat("[", 600) + strings.Repeat("]", 600),
	`{"p":` + strings.Repeat(`{"p":`, 520) + `null` + strings.Repeat("}", 521),
	`{"list":[` + strings.Repeat(`{"list":[`, 300) + strings.Repeat("]}", 300) + `]}`,
}

// manyKeys is an object with n distinct unknown keys and then, when dup,
// the first one again (past the limits of the walk's key list).
func manyKeys(n int, dup bool) string {
	var b strings.Builder
	b.WriteString(`{"s":"x"`)
	for i := range n {
		b.WriteString(`,"k` + strconv.Itoa(i) + `":1`)
	}
	if dup {
		b.WriteString(`,"k0":2`)
	}
	return b.String() + "}"
}

// assertFitsLikeOracle holds the strict walk to the oracle in both its
// modes: the yes/no guard (fits, and CheckJSON's error), and, over a
// body CheckJSON accepted, the list of issues (typeIssues: every issue
// of checkType over the tree, in its order, at every limit).
func assertFitsLikeOracle(t *testing.T, name string, d *tdesc, body []byte) {
	t.Helper()
	fits, err := checkFits(d, body)
	wantFits, wantErr := oracleFits(d, body)
	if fits != wantFits || !reflect.DeepEqual(err, wantErr) {
		t.Fatalf("%s %q:\n one pass: fits=%v err=%v\n two passes: fits=%v err=%v", name, body, fits, err, wantFits, wantErr)
	}
	if err != nil {
		return
	}
	tree, _ := DecodeJSON(body)
	for _, max := range []int{0, 1, 2} {
		got, want := newState(false, max), newState(false, max)
		typeIssues(d, body, got)
		checkType(d, tree, want)
		if !reflect.DeepEqual(got.issues, want.issues) {
			t.Fatalf("%s %q (max %d):\n bytes: %q\n tree:  %q", name, body, max, got.issues, want.issues)
		}
	}
}

func TestCheckFitsMatchesTwoPasses(t *testing.T) {
	bodies := decodeCorpus(5, 31, 32, 33, 40, 100)
	for name, typ := range fitTypes {
		d := descOf(typ)
		for _, body := range bodies {
			assertFitsLikeOracle(t, name, d, []byte(body))
		}
	}
}

// TestCheckFitsRandom checks the one pass against the oracle on bodies
// generated from the types: well typed, then with one byte changed.
func TestCheckFitsRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for name, typ := range fitTypes {
		d := descOf(typ)
		eachGenerated(r, d, 4000, 500, func(body []byte, _ bool) {
			assertFitsLikeOracle(t, name, d, body)
		})
	}
}

// eachGenerated is the input loop of the randomized oracle tests: n
// times with FX_SLOW_TESTS=1 (.ci/run sets it), short times otherwise or
// under -short (go test ./... stays quick), a body genValue writes for d, then, when
// it is not empty, the same body with one byte changed to a JSON
// delimiter, digit, escape or invalid byte (mutated). The bodies come
// from r, so a test's seed fixes them.
func eachGenerated(r *rand.Rand, d *tdesc, n, short int, check func(body []byte, mutated bool)) {
	if testing.Short() || os.Getenv("FX_SLOW_TESTS") == "" {
		n = short
	}
	for range n {
		body := []byte(genValue(r, d, 0))
		check(body, false)
		if len(body) > 0 {
			m := append([]byte{}, body...)
			m[r.IntN(len(m))] = "\"{}[],:0-.e1\\ux\xff"[r.IntN(16)]
			check(m, true)
		}
	}
}

// genValue writes a JSON value for d, usually one that fits it.
func genValue(r *rand.Rand, d *tdesc, depth int) string {
	if r.IntN(25) == 0 || depth > 4 { // another kind, or null
		return [...]string{`null`, `"s"`, `1`, `-2.5`, `true`, `[]`, `{}`, `[1,"a"]`, `{"a":1}`}[r.IntN(9)]
	}
	switch d.kind {
	case tString, tText:
		return [...]string{`"a"`, `""`, `"\u00e9\n"`, `"127.0.0.1"`}[r.IntN(4)]
	case tBytes:
		return [...]string{`"aGk="`, `"!"`, `""`}[r.IntN(3)]
	case tTime:
		return [...]string{`"2024-01-02T03:04:05Z"`, `"2024"`}[r.IntN(2)]
	case tBool:
		return [...]string{`true`, `false`}[r.IntN(2)]
	case tInt, tUint, tFloat:
		return [...]string{`0`, `-0`, `1`, `-1`, `127`, `128`, `255`, `256`, `-129`, `32768`, `1.5`, `2.0`, `1e2`,
			`1E-2`, `4294967296`, `9007199254740992`, `9007199254740993`, `123456789012345`, `-999999999999999`,
			`3.5e38`, `1e400`}[r.IntN(21)]
	case tSlice:
		var parts []string
		for range r.IntN(4) {
			parts = append(parts, genValue(r, d.elem, depth+1))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case tMap, tStruct:
		var parts []string
		for range r.IntN(6) {
			key, vd := "k"+strconv.Itoa(r.IntN(3)), d.elem
			if d.kind == tStruct && len(d.fields) > 0 && r.IntN(6) != 0 {
				f := d.fields[r.IntN(len(d.fields))]
				key, vd = f.name, f.d
				if r.IntN(8) == 0 {
					key = strings.ToUpper(key)
				}
			}
			if vd == nil {
				vd = &tdesc{kind: tAny}
			}
			parts = append(parts, strconv.Quote(key)+":"+genValue(r, vd, depth+1))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return `{"x":[1,{"y":null}]}`
}

func FuzzCheckFits(f *testing.F) {
	for _, b := range fitBodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for name, typ := range fitTypes {
			assertFitsLikeOracle(t, name, descOf(typ), []byte(body))
		}
	})
}

// kindsValid fits fitKinds; kindsMisfit has a misfit in most fields.
var (
	kindsValid = []byte(`{"s":"a","t":"127.0.0.1","b":"aGk=","when":"2024-01-02T03:04:05Z","ok":true,"i8":1,"i64":-5,` +
		`"u":3,"f32":1.5,"f64":2.5,"arr":[1,2],"list":[{"s":"x","m":{"a":1}}],"m":{"a":1,"b":2},"any":{"x":[1]},"ms":{"k":"v"}}`)
	kindsMisfit = []byte(`{"s":1,"t":true,"b":"!","when":"now","ok":"yes","i8":300,"i64":1.5,"u":-1,"f32":1e39,"f64":"x",` +
		`"arr":[1,"2"],"list":[{"s":[],"m":{"a":"1"}}],"m":{"a":1.5,"b":{}},"any":{"x":[1]},"ms":{"k":2}}`)
)

// BenchmarkStrictWalk is the strict walk in its two modes over every
// kind: the guard over a body that fits (no allocation but the time and
// base64 checks), and the list of every issue of one that does not.
func BenchmarkStrictWalk(b *testing.B) {
	d := descOf(reflect.TypeFor[fitKinds]())
	b.Run("fits", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !fitsOnly(d, kindsValid) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("issues", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			st := newState(false, 0)
			typeIssues(d, kindsMisfit, st)
			if len(st.issues) != 16 {
				b.Fatal(st.issues)
			}
		}
	})
}
