// Command echo is the hello world of cmd/binsize in Echo v5.
package main

import (
	"log"
	"net/http"

	"github.com/labstack/echo/v5"
)

func main() {
	e := echo.New()
	e.GET("/hello", func(c *echo.Context) error {
		return c.JSON(200, map[string]string{"message": "Hello, World!"})
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", e))
}
