package guest

import (
	"encoding/binary"
	"testing"
)

func encode(method, path, query string, headers, params [][2]string, body string) []byte {
	u := func(b []byte, n int) []byte { return binary.LittleEndian.AppendUint32(b, uint32(n)) }
	b := u(u(u(u(u(u(nil, len(method)), len(path)), len(query)), len(headers)), len(params)), len(body))
	b = append(append(append(b, method...), path...), query...)
	for _, kv := range append(headers, params...) {
		b = append(append(u(u(b, len(kv[0])), len(kv[1])), kv[0]...), kv[1]...)
	}
	return append(b, body...)
}

func TestDecodeRequest(t *testing.T) {
	enc := encode("PUT", "/a/1", "q=%00", [][2]string{{"X-A", "1"}, {"x-a", "2"}}, [][2]string{{"id", "1"}}, "\x00body")
	r, err := DecodeRequest(enc)
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != "PUT" || r.Path != "/a/1" || r.Query != "q=%00" || string(r.Body) != "\x00body" ||
		len(r.Header.Values("X-A")) != 2 || r.Param("id") != "1" || r.Param("nope") != "" {
		t.Fatalf("%+v", r)
	}
	enc[len(enc)-1] = 'X' // the body is a copy
	if string(r.Body) != "\x00body" {
		t.Error("Body aliases the input")
	}
	// Malformed inputs are errors, never panics.
	for i := range enc {
		if _, err := DecodeRequest(enc[:i]); err == nil {
			t.Errorf("prefix %d decoded", i)
		}
	}
	bad := encode("GET", "/", "", nil, nil, "")
	binary.LittleEndian.PutUint32(bad[12:], 1<<30) // absurd header count
	if _, err := DecodeRequest(bad); err == nil {
		t.Error("absurd header count decoded")
	}
	binary.LittleEndian.PutUint32(bad[12:], 0xffffffff) // negative where int has 32 bits
	if _, err := DecodeRequest(bad); err == nil {
		t.Error("header count 2³²-1 decoded")
	}
	binary.LittleEndian.PutUint32(bad[12:], 0)
	binary.LittleEndian.PutUint32(bad[20:], 0xffffffff) // body longer than the input
	if _, err := DecodeRequest(bad); err == nil {
		t.Error("overlong body decoded")
	}
	binary.LittleEndian.PutUint32(bad[20:], 0)
	binary.LittleEndian.PutUint32(bad[0:], 0xffffffff) // method longer than the input
	if _, err := DecodeRequest(bad); err == nil {
		t.Error("overlong method decoded")
	}
}

func TestHeaderSet(t *testing.T) {
	h := Header{{"A", "1"}, {"b", "2"}, {"a", "3"}}
	h.Set("a", "4")
	if len(h) != 2 || h.Get("A") != "4" || h.Get("B") != "2" || h[0].Name() != "b" || h[1].Value() != "4" {
		t.Fatalf("%v", h)
	}
}

func TestAppendBodyEscapes(t *testing.T) {
	for _, body := range []string{"plain ascii text long enough", "0123456\"tail", "01234567\\x", "0123456789\x01", "ünïcödé ok 12345678", "\n"} {
		got := string(appendBody(nil, []byte(body)))
		want := appendString(nil, body)
		if got != string(want) {
			t.Errorf("%q: %s, want %s", body, got, want)
		}
	}
}
