//go:build !linux

package sphinx

import (
	"errors"
	"os"
)

// memoryFile is not available here: where /dev/fd/N shares the descriptor's offset, a child
// could not read the file from its start. The dictionary goes through a temporary file.
func memoryFile(string, []byte) (*os.File, error) { return nil, errors.ErrUnsupported }
