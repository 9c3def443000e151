package sphinx

import (
	"os"

	"golang.org/x/sys/unix"
)

// memoryFile returns a file in memory holding b (memfd_create), which a child process can
// open as /dev/fd/N from its own start: it leaves nothing on disk on any path out.
func memoryFile(name string, b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
