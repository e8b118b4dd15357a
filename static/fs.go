package static

import (
	"io/fs"
	"os"
)

// regularFS is the file system a static mount hands fasthttp.FS: fsys
// (the root directory's os.Root view, or Config.FS) with every
// file that is neither regular nor a directory (a FIFO, a socket, a
// device) reported as missing, so it is answered 404 like one.
//
// Opening a FIFO for reading blocks until a writer opens it, which may be
// never: one request and one goroutine lost per attempt. Through root,
// files are opened with O_NONBLOCK (openNonBlock; on a regular file or a
// directory it changes nothing) and checked with fstat before anything
// reads them, so there is no window between a check and the open. For
// another fs.FS, which has no open flags, fs.Stat is asked first (it
// opens nothing when the FS implements fs.StatFS, as os.DirFS and
// embed.FS do), and the opened file is checked again.
//
// Cost: one fstat per open; fasthttp opens a file once per
// CacheDuration, not per request. For Config.FS, one fs.Stat more.
type regularFS struct {
	fs.FS
	root *os.Root // non-nil: FS is root.FS(), opened through root
}

// Open opens name when it is a regular file or a directory.
func (r regularFS) Open(name string) (fs.File, error) {
	var f fs.File
	if r.root != nil {
		if !fs.ValidPath(name) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
		}
		of, err := r.root.OpenFile(name, os.O_RDONLY|openNonBlock, 0)
		if err != nil {
			return nil, err
		}
		f = of
	} else {
		if _, err := r.Stat(name); err != nil {
			return nil, err
		}
		var err error
		if f, err = r.FS.Open(name); err != nil {
			return nil, err
		}
	}
	st, err := f.Stat()
	if err == nil && !servable(st.Mode()) {
		err = notServable(name)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Stat is fs.Stat of name, which is reported missing when it is neither
// a regular file nor a directory. fasthttp.FS calls it on the original of
// a precompressed sibling.
func (r regularFS) Stat(name string) (fs.FileInfo, error) {
	st, err := fs.Stat(r.FS, name)
	if err == nil && !servable(st.Mode()) {
		return nil, notServable(name)
	}
	return st, err
}

// servable reports whether a file of mode m may be served.
func servable(m fs.FileMode) bool { return m.IsRegular() || m.IsDir() }

func notServable(name string) error {
	return &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
