package fx

import (
	"errors"
	"mime/multipart"
	"strconv"

	"github.com/valyala/fasthttp"
)

// Forms. fasthttp reads a multipart/form-data request with a
// Content-Length while it reads the request (Server.DisablePreParseMultipartForm
// is false): the body never exists as one buffer, files over 16 MiB in
// total go to temporary files (os.TempDir), and the whole is bounded by
// Config.BodyLimit before any of it is read (413 FX_PAYLOAD_TOO_LARGE). A
// malformed multipart body is then refused before any handler runs: 400
// FX_BAD_REQUEST. A chunked multipart body is read whole (within
// BodyLimit) and parsed, in memory, when MultipartForm is first called.
// Either way fasthttp deletes the temporary files when the request ends
// (Request.Reset removes them), so a handler that wants to keep a file must
// copy it before returning.

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
// The limits of memory: file contents up to 16 MiB in total stay in
// memory, the rest goes to temporary files; non-file values count
// against mime/multipart's own 10 MiB cap (fasthttp's fixed settings; see
// the Forms note above). The part and file-size limits are checked on the
// parsed form: they refuse the request, while BodyLimit is what bounds
// the work of parsing it.
func (c *Ctx) MultipartForm() (*multipart.Form, error) {
	req := &c.rc.Request
	if !isMultipart(req) {
		return nil, catalogError(ErrorCodes.BadRequest, "The request body is not multipart/form-data")
	}
	f, err := req.MultipartFormWithLimit(c.app.cfg.BodyLimit)
	if err != nil {
		if errors.Is(err, fasthttp.ErrBodyTooLarge) || errors.Is(err, multipart.ErrMessageTooLarge) {
			return nil, catalogError(ErrorCodes.PayloadTooLarge, "The multipart form is larger than the server accepts")
		}
		return nil, catalogError(ErrorCodes.BadRequest, "The multipart form could not be parsed")
	}
	cfg := &c.app.cfg
	parts := 0
	for _, v := range f.Value {
		parts += len(v)
	}
	for _, fhs := range f.File {
		parts += len(fhs)
		if cfg.MultipartMaxFileSize > 0 {
			for _, fh := range fhs {
				if fh.Size > cfg.MultipartMaxFileSize {
					return nil, catalogError(ErrorCodes.PayloadTooLarge,
						"A file in the multipart form is larger than "+strconv.FormatInt(cfg.MultipartMaxFileSize, 10)+" bytes")
				}
			}
		}
	}
	if parts > cfg.MultipartMaxParts {
		return nil, catalogError(ErrorCodes.PayloadTooLarge,
			"The multipart form has more than "+strconv.Itoa(cfg.MultipartMaxParts)+" parts")
	}
	return f, nil
}

// isMultipart reports whether the request declares multipart/form-data.
func isMultipart(req *fasthttp.Request) bool {
	return len(req.Header.MultipartFormBoundary()) > 0
}
