package fx

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"mime/multipart"
	"strconv"

	"github.com/valyala/fasthttp"
)

// Reading the request (see Ctx for which results are copies and which
// alias request memory): its method, path and parameters, query, headers,
// body and cookies, and its form (below).

// Method returns the request method. Common methods cost no allocation.
func (c *Ctx) Method() string { return methodString(c.rc.Method()) }

func methodString(m []byte) string {
	switch string(m) { // the compiler does not allocate for this switch
	case fasthttp.MethodGet:
		return fasthttp.MethodGet
	case fasthttp.MethodPost:
		return fasthttp.MethodPost
	case fasthttp.MethodPut:
		return fasthttp.MethodPut
	case fasthttp.MethodPatch:
		return fasthttp.MethodPatch
	case fasthttp.MethodDelete:
		return fasthttp.MethodDelete
	case fasthttp.MethodHead:
		return fasthttp.MethodHead
	case fasthttp.MethodOptions:
		return fasthttp.MethodOptions
	}
	return string(m)
}

// Path returns the request path, percent-decoded and normalised (as
// net/http's URL.Path), without the query. It is the path the router
// matched, so a guard on it sees what decides the route. For a
// path refused before routing (seen only by OnResponse observers) it is
// the path as sent, escapes included. It allocates a copy.
func (c *Ctx) Path() string {
	if c.out.rawPath {
		return string(c.rc.URI().PathOriginal())
	}
	return string(c.rc.Path())
}

// Href returns the full request URL as the client sent it
// (scheme://host/path?query). It allocates a copy.
func (c *Ctx) Href() string { return string(c.rc.URI().FullURI()) }

// Host returns the Host header (with port, if any). It allocates a copy.
func (c *Ctx) Host() string { return string(c.rc.Host()) }

// Param returns the value of the path parameter name (":name" or "*name"
// in the route), or "" when the route has no such parameter. The value is
// the matching part of c.Path(): already percent-decoded (once) and
// normalised, since the router matches the path c.Path() returns; it is
// not decoded again, so a value never differs from what
// c.Path() shows. The value is safe to keep.
func (c *Ctx) Param(name string) string {
	v, _ := c.rc.UserValue(name).(string)
	return v
}

// Params calls yield for every path parameter of the matched route, with
// decoded values, in no particular order.
func (c *Ctx) Params(yield func(name, value string) bool) {
	if c.rt == nil {
		return
	}
	for _, name := range c.rt.params {
		if !yield(name, c.Param(name)) {
			return
		}
	}
}

// Header returns the first value of the request header name
// (case-insensitive), or "". It allocates a copy.
func (c *Ctx) Header(name string) string { return string(c.rc.Request.Header.Peek(name)) }

// Query returns the first value of the query parameter name, decoded, or "".
// It allocates a copy.
func (c *Ctx) Query(name string) string { return string(c.rc.QueryArgs().Peek(name)) }

// Body returns the raw request body. The slice aliases fasthttp's request
// buffer: it is valid only until the handler returns; copy it to keep it.
func (c *Ctx) Body() []byte { return c.rc.Request.Body() }

// Cookie returns the value of the request cookie name, or "" when the
// request has none. The string is a copy, safe to keep; it costs one
// allocation when the cookie is present.
func (c *Ctx) Cookie(name string) string {
	return string(c.rc.Request.Header.Cookie(name))
}

// Forms. A multipart/form-data body is read like any other body (whole,
// within Config.BodyLimit, or 413 FX_PAYLOAD_TOO_LARGE before it is read)
// and parsed only when a handler asks for it (MultipartForm, FormValue):
// the App's fasthttp.Server has DisablePreParseMultipartForm set, so a route
// that never reads its form never pays for parsing one, and a malformed or
// oversized form is refused by the handler that reads it, with the codes
// MultipartForm states, the same on every listener (fasthttp's and
// nethttp's, which share this code).
//
// The configured limits are the only ones. mime/multipart's Reader.ReadForm
// refuses a form of more than 1000 parts (its GODEBUG multipartmaxparts),
// whatever Config.MultipartMaxParts says; so fx counts the parts first (one
// pass over the body with Reader.NextRawPart, which stops one part past
// the limit), and a form within the limit but over 1000 parts is read 1000
// parts at a time, each batch re-encoded and read by ReadForm, and the
// results merged. A process that lowers multipartmaxparts below 1000
// lowers the most parts a form may have to that.
//
// Files up to 16 MiB in total per batch stay in memory; the rest goes to
// temporary files (os.TempDir), removed when the request ends (the parsed
// form is a request user value, closed with the request), so a handler
// that keeps a file must copy it before returning. A gzip
// Content-Encoding is decoded first, within BodyLimit; any other encoding
// is refused (400).

// FormValue returns the first value of the form field name: from an
// application/x-www-form-urlencoded or multipart/form-data body, then from
// the query, as net/http's FormValue (a body value wins). It returns "" when
// there is none, also when the multipart body is refused (call
// MultipartForm to get that error). The string is a copy, safe to keep;
// cost: one allocation when found, plus the form's parse on first use.
func (c *Ctx) FormValue(name string) string {
	req := &c.rc.Request
	if v := req.PostArgs().Peek(name); v != nil {
		return string(v)
	}
	if isMultipart(req) {
		if f, err := c.MultipartForm(); err == nil {
			if v := f.Value[name]; len(v) > 0 {
				return v[0]
			}
		}
	}
	return string(c.rc.QueryArgs().Peek(name))
}

// MultipartForm returns the request's multipart/form-data form: field
// values and file headers (open a file with FileHeader.Open). It is parsed
// once per request. The form, its files and any temporary files on disk
// are valid until the handler returns: copy what you keep.
//
// Refusals are envelopes, ready to return:
//
//   - not multipart/form-data, no boundary, or a malformed body: 400
//     FX_BAD_REQUEST;
//   - more than Config.MultipartMaxParts parts, a file part over
//     Config.MultipartMaxFileSize, or a body over Config.BodyLimit: 413
//     FX_PAYLOAD_TOO_LARGE.
//
// The form is parsed on the first call, not before (a route that never
// calls it never parses a form): the parts are counted, then read (see the
// Forms note above for how, and for what stays in memory). Cost: one pass
// over the body to count, one ReadForm per 1000 parts, and, past 1000
// parts, one copy of the body into the batches.
func (c *Ctx) MultipartForm() (*multipart.Form, error) {
	req := &c.rc.Request
	if !isMultipart(req) {
		return nil, catalogError(ErrorCodes.BadRequest, "The request body is not multipart/form-data")
	}
	if p, ok := c.rc.UserValue(formKey{}).(*parsedForm); ok {
		return p.form, p.err
	}
	p := new(parsedForm)
	p.form, p.err = c.parseForm(req)
	c.rc.SetUserValue(formKey{}, p) // closed, removing its files, when the request ends
	return p.form, p.err
}

// formKey is the request user value holding the *parsedForm.
type formKey struct{}

// parsedForm is a request's form and the error parsing it gave. fasthttp
// closes the io.Closer user values of a request when it resets it (after
// the response, on both listeners): Close removes the form's temporary
// files.
type parsedForm struct {
	form *multipart.Form
	err  error
}

func (p *parsedForm) Close() error {
	if p.form == nil {
		return nil
	}
	return p.form.RemoveAll()
}

// Parsing bounds (see the Forms note above).
const (
	formBatch  = 1000     // parts per ReadForm: mime/multipart's default cap
	formMemory = 16 << 20 // file bytes per batch kept in memory, as fasthttp did
)

// parseForm parses req's multipart body within the App's limits.
func (c *Ctx) parseForm(req *fasthttp.Request) (*multipart.Form, error) {
	cfg := &c.app.cfg
	body, err := formBody(req, cfg.BodyLimit)
	if err != nil {
		return nil, err
	}
	boundary := string(req.Header.MultipartFormBoundary())
	parts, err := countParts(body, boundary, cfg.MultipartMaxParts)
	if err != nil {
		return nil, formError(err)
	}
	if parts > cfg.MultipartMaxParts {
		return nil, catalogError(ErrorCodes.PayloadTooLarge,
			"The multipart form has more than "+strconv.Itoa(cfg.MultipartMaxParts)+" parts")
	}
	f, err := readForm(body, boundary, parts)
	if err != nil {
		return nil, formError(err)
	}
	if cfg.MultipartMaxFileSize > 0 {
		for _, fhs := range f.File {
			for _, fh := range fhs {
				if fh.Size > cfg.MultipartMaxFileSize {
					f.RemoveAll()
					return nil, catalogError(ErrorCodes.PayloadTooLarge,
						"A file in the multipart form is larger than "+strconv.FormatInt(cfg.MultipartMaxFileSize, 10)+" bytes")
				}
			}
		}
	}
	return f, nil
}

// errFormTooLarge is a decoded body over the limit.
var errFormTooLarge = errors.New("the decoded form is larger than the body limit")

// formError is the envelope for a form that could not be read.
func formError(err error) error {
	if errors.Is(err, errFormTooLarge) || errors.Is(err, multipart.ErrMessageTooLarge) {
		return catalogError(ErrorCodes.PayloadTooLarge, "The multipart form is larger than the server accepts")
	}
	return catalogError(ErrorCodes.BadRequest, "The multipart form could not be parsed")
}

// formBody is req's body with its Content-Encoding (none or gzip) removed;
// a gzip body may decode to at most limit bytes.
func formBody(req *fasthttp.Request, limit int) ([]byte, error) {
	body := req.Body()
	switch ce := req.Header.ContentEncoding(); {
	case len(ce) == 0:
		return body, nil
	case string(ce) != "gzip":
		return nil, catalogError(ErrorCodes.BadRequest, "The multipart form has an unsupported Content-Encoding")
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, formError(err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(limit)+1))
	if err != nil {
		return nil, formError(err)
	}
	if len(out) > limit {
		return nil, formError(errFormTooLarge)
	}
	return out, nil
}

// countParts counts the parts of the multipart body, stopping at limit+1.
// Cost: one pass over the body, no copy of part contents.
func countParts(body []byte, boundary string, limit int) (int, error) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	n := 0
	for n <= limit {
		_, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// readForm reads the multipart body of parts parts (counted by
// countParts) into a form: with one ReadForm when mime/multipart's part cap
// allows, otherwise formBatch parts at a time, each batch re-encoded
// (under a fresh boundary, headers and raw contents as sent) and the
// forms merged.
func readForm(body []byte, boundary string, parts int) (*multipart.Form, error) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	if parts <= formBatch {
		return mr.ReadForm(formMemory)
	}
	all := &multipart.Form{Value: map[string][]string{}, File: map[string][]*multipart.FileHeader{}}
	var batch bytes.Buffer
	for more := true; more; {
		batch.Reset()
		w := multipart.NewWriter(&batch)
		n := 0
		for ; n < formBatch; n++ {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				more = false
				break
			}
			if err == nil {
				err = copyPart(w, p)
			}
			if err != nil {
				all.RemoveAll()
				return nil, err
			}
		}
		if n == 0 {
			break
		}
		if err := w.Close(); err != nil {
			all.RemoveAll()
			return nil, err
		}
		f, err := multipart.NewReader(&batch, w.Boundary()).ReadForm(formMemory)
		if err != nil {
			all.RemoveAll()
			return nil, err
		}
		for k, v := range f.Value {
			all.Value[k] = append(all.Value[k], v...)
		}
		for k, v := range f.File {
			all.File[k] = append(all.File[k], v...)
		}
	}
	return all, nil
}

// copyPart writes p, its headers and raw contents, as a part of w.
func copyPart(w *multipart.Writer, p *multipart.Part) error {
	pw, err := w.CreatePart(p.Header)
	if err == nil {
		_, err = io.Copy(pw, p)
	}
	return err
}

// isMultipart reports whether the request declares multipart/form-data.
func isMultipart(req *fasthttp.Request) bool {
	return len(req.Header.MultipartFormBoundary()) > 0
}
