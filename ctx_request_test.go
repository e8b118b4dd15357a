package fx_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
)

// multipartBody builds a form with the given fields and files (name, content).
func multipartBody(t *testing.T, fields map[string]string, files map[string][]byte) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	for k, v := range files {
		fw, err := w.CreateFormFile(k, k+".bin")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(v)
	}
	w.Close()
	return w.FormDataContentType(), &buf
}

// formFile reads the request's multipart form and opens the first file
// under name; the caller closes it.
func formFile(c *fx.Ctx, name string) (*multipart.Form, multipart.File, error) {
	f, err := c.MultipartForm()
	if err != nil {
		return nil, nil, err
	}
	rd, err := f.File[name][0].Open()
	return f, rd, err
}

func multipartReq(t *testing.T, fields map[string]string, files map[string][]byte, chunked bool) *http.Request {
	ct, body := multipartBody(t, fields, files)
	req := httptest.NewRequest("POST", "/?q=query&name=fromquery", bytes.NewReader(body.Bytes()))
	req.Header.Set("Content-Type", ct)
	if chunked {
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
	}
	return req
}

func TestFormValueURLEncoded(t *testing.T) {
	app := quietFor(t)
	app.Post("/", func(c *fx.Ctx) error {
		return c.String(200, c.FormValue("name")+"|"+c.FormValue("q")+"|"+c.FormValue("none"))
	})
	r := do(t, app, "POST", "/?name=fromquery&q=query", "name=J%C3%BCrgen+X", "Content-Type", "application/x-www-form-urlencoded")
	if string(r.body) != "Jürgen X|query|" {
		t.Fatalf("body %q: the body value wins, the query fills in", r.body)
	}
}

func TestMultipartForm(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		app := quiet()
		app.Post("/", func(c *fx.Ctx) error {
			f, err := c.MultipartForm()
			if err != nil {
				return err
			}
			fh := f.File["doc"][0]
			rd, err := fh.Open()
			if err != nil {
				return err
			}
			defer rd.Close()
			b, _ := io.ReadAll(rd)
			return c.String(200, c.FormValue("name")+"|"+c.FormValue("q")+"|"+string(b))
		})
		r := doReq(t, app, multipartReq(t, map[string]string{"name": "ann"}, map[string][]byte{"doc": []byte("file-bytes")}, chunked))
		if r.status != 200 || string(r.body) != "ann|query|file-bytes" {
			t.Errorf("chunked=%v: %d %q", chunked, r.status, r.body)
		}
		app.Shutdown()
	}
}

func TestMultipartFormRefusals(t *testing.T) {
	cfg := fx.Config{MultipartMaxParts: 3, MultipartMaxFileSize: 100, BodyLimit: 64 << 10}
	app := quietFor(t, cfg)
	app.Post("/", func(c *fx.Ctx) error {
		if _, err := c.MultipartForm(); err != nil {
			return err
		}
		return c.NoContent(204)
	})
	many := map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}
	big := map[string][]byte{"f": bytes.Repeat([]byte("x"), 101)}
	for _, chunked := range []bool{false, true} {
		mustEnvelope(t, doReq(t, app, multipartReq(t, many, nil, chunked)), 413, fx.ErrorCodes.PayloadTooLarge)
		mustEnvelope(t, doReq(t, app, multipartReq(t, nil, big, chunked)), 413, fx.ErrorCodes.PayloadTooLarge)
		if r := doReq(t, app, multipartReq(t, map[string]string{"a": "1"}, map[string][]byte{"f": make([]byte, 100)}, chunked)); r.status != 204 {
			t.Errorf("chunked=%v: within the limits: %d %s", chunked, r.status, r.body)
		}
		huge := map[string][]byte{"f": bytes.Repeat([]byte("x"), 70<<10)}
		mustEnvelope(t, doReq(t, app, multipartReq(t, nil, huge, chunked)), 413, fx.ErrorCodes.PayloadTooLarge)

		// Malformed: the closing boundary is missing.
		ct, body := multipartBody(t, map[string]string{"a": "1"}, nil)
		cut := body.Bytes()[:body.Len()-10]
		req := httptest.NewRequest("POST", "/", bytes.NewReader(cut))
		req.Header.Set("Content-Type", ct)
		if chunked {
			req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
		}
		mustEnvelope(t, doReq(t, app, req), 400, fx.ErrorCodes.BadRequest)
	}
	// Not multipart at all.
	mustEnvelope(t, do(t, app, "POST", "/", "a=1", "Content-Type", "application/x-www-form-urlencoded"), 400, fx.ErrorCodes.BadRequest)
	mustEnvelope(t, do(t, app, "POST", "/", "x", "Content-Type", "multipart/form-data"), 400, fx.ErrorCodes.BadRequest)
}

// A file too big to keep in memory goes to a temporary file, which is
// removed when the request ends.
func TestMultipartTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	app := quietFor(t, fx.Config{BodyLimit: 32 << 20})
	var onDisk string
	app.Post("/", func(c *fx.Ctx) error {
		_, rd, err := formFile(c, "big")
		if err != nil {
			return err
		}
		defer rd.Close()
		if osf, ok := rd.(*os.File); ok {
			onDisk = osf.Name()
		}
		return c.NoContent(204)
	})
	big := map[string][]byte{"big": bytes.Repeat([]byte("y"), 17<<20)}
	if r := doReq(t, app, multipartReq(t, nil, big, false)); r.status != 204 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if !strings.HasPrefix(onDisk, dir) {
		t.Fatalf("the 17 MiB file was not in a temporary file under TMPDIR (%q)", onDisk)
	}
	// fasthttp resets the request (removing the files) right after it has
	// written the response, so the client may look a moment before that.
	kittest.Eventually(t, "temporary file "+onDisk+" removed after the request", func() bool {
		_, err := os.Stat(onDisk)
		return os.IsNotExist(err)
	})
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("TMPDIR keeps %d entries", len(ents))
	}
}

// Over mime/multipart's cap of 1000 parts, a form within
// MultipartMaxParts is read in batches: values and files of every batch
// are in the form, files open with their contents, a chunked body too.
func TestMultipartOverMimePartCap(t *testing.T) {
	app := quietFor(t, fx.Config{MultipartMaxParts: 2500})
	app.Post("/", func(c *fx.Ctx) error {
		f, rd, err := formFile(c, "late")
		if err != nil {
			return err
		}
		defer rd.Close()
		b, _ := io.ReadAll(rd)
		return c.String(200, strconv.Itoa(len(f.Value))+"|"+c.FormValue("f0")+"|"+c.FormValue("f2199")+"|"+string(b))
	})
	fields := map[string]string{}
	for i := range 2200 {
		fields["f"+strconv.Itoa(i)] = "v" + strconv.Itoa(i)
	}
	for _, chunked := range []bool{false, true} {
		r := doReq(t, app, multipartReq(t, fields, map[string][]byte{"late": []byte("third batch")}, chunked))
		if r.status != 200 || string(r.body) != "2200|v0|v2199|third batch" {
			t.Errorf("chunked=%v: %d %q", chunked, r.status, r.body)
		}
	}
}
