//go:build unix

package static

import "syscall"

// openNonBlock is the open flag with which regularFS opens files of a
// static root: a FIFO then opens at once instead of waiting for a writer.
const openNonBlock = syscall.O_NONBLOCK
