//go:build !unix

package static

// openNonBlock is 0 where there are no FIFOs to open (see
// fs_unix.go).
const openNonBlock = 0
