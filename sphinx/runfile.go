package sphinx

import (
	"fmt"
	"os"
	"os/exec"
)

// runFile is a file handed to one run of the program (a grammar, its dictionary): an
// in-memory file the program opens as /dev/fd/N where the system has them (Linux), else a
// temporary file removed after the run. Either way nothing is left on disk on any path out.
type runFile struct {
	file *os.File // an in-memory file, passed to the program; or nil
	temp string   // else the temporary file's path
}

func newRunFile(name string, b []byte) (*runFile, error) {
	if f, err := memoryFile(name, b); err == nil {
		return &runFile{file: f}, nil
	}
	return tempRunFile(name, b)
}

// tempRunFile writes b to a temporary file, for systems without in-memory files.
func tempRunFile(name string, b []byte) (*runFile, error) {
	f, err := os.CreateTemp("", name+"-*")
	if err != nil {
		return nil, fmt.Errorf("sphinx: writing the %s: %w", name, err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("sphinx: writing the %s: %w", name, err)
	}
	return &runFile{temp: f.Name()}, nil
}

// pass hands the file to cmd and returns the path the program opens it by: the descriptor
// after standard input, output, error and the files passed before it.
func (f *runFile) pass(cmd *exec.Cmd) string {
	if f.file == nil {
		return f.temp
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, f.file)
	return fmt.Sprintf("/dev/fd/%d", 2+len(cmd.ExtraFiles))
}

// close releases the file once the program has ended.
func (f *runFile) close() {
	if f.file != nil {
		f.file.Close()
	}
	if f.temp != "" {
		os.Remove(f.temp)
	}
}
