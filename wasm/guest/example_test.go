package guest_test

import (
	"fmt"

	"github.com/fxhq/fx/wasm/guest"
)

// A guest registers one handler from init; the SDK exports the ABI
// functions when built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared.
func ExampleHandle() {
	guest.Handle(func(r guest.Request) guest.Response {
		if r.Method != "GET" {
			return guest.Text(405, "GET only")
		}
		return guest.JSON(200, append(guest.AppendJSONString([]byte(`{"id":`), r.Param("id")), '}'))
	})
}

// AppendResponse is what fx_handle hands back to the host: a strict
// WasmResponse document.
func ExampleAppendResponse() {
	r := guest.Text(201, "created\n")
	r.Header.Add("Set-Cookie", "a=1")
	r.Header.Add("Set-Cookie", "b=2")
	fmt.Println(string(guest.AppendResponse(nil, r)))

	fmt.Println(string(guest.AppendResponse(nil, guest.Response{Body: []byte{0xff, 0x00}})))
	// Output:
	// {"status":201,"headers":{"Content-Type":"text/plain; charset=utf-8","Set-Cookie":["a=1","b=2"]},"body":"created\n"}
	// {"status":200,"bodyBase64":"/wA="}
}

func ExampleHeader_Get() {
	h := guest.Header{{"Content-Type", "text/plain"}, {"X-Tag", "a"}, {"x-tag", "b"}}
	fmt.Println(h.Get("content-type"), h.Values("X-TAG"))
	// Output: text/plain [a b]
}
