// Command fasthttp is the hello world of cmd/binsize in raw fasthttp, the
// floor fx is built on.
package main

import (
	"encoding/json"
	"log"

	"github.com/valyala/fasthttp"
)

func main() {
	log.Fatal(fasthttp.ListenAndServe("127.0.0.1:8080", func(rc *fasthttp.RequestCtx) {
		if string(rc.Path()) != "/hello" {
			rc.SetStatusCode(404)
			return
		}
		b, _ := json.Marshal(map[string]string{"message": "Hello, World!"})
		rc.SetContentType("application/json")
		rc.SetBody(b)
	}))
}
