//go:build !unix

package fx

// openNonBlock is 0 where there are no FIFOs to open (see
// static_fs_unix.go).
const openNonBlock = 0
