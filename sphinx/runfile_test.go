package sphinx

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestRunFile: the files a run gets (the grammar, then its dictionary) read back whole from
// where the program is told to find them, and nothing is left once the run is over, in memory
// or in a file.
func TestRunFile(t *testing.T) {
	grammar := []byte("#JSGF V1.0;\ngrammar g;\npublic <s> = what is my balance;\n")
	want := []byte("balance B AE L AH N S\nwhat W AH T\nwhat(2) HH W AH T\n")
	cmd := &exec.Cmd{}
	first, err := newRunFile("sphinx-grammar", grammar)
	if err != nil {
		t.Fatal(err)
	}
	defer first.close()
	memory, err := newRunFile("sphinx-dictionary", want)
	if err != nil {
		t.Fatal(err)
	}
	first.pass(cmd)
	path := memory.pass(cmd)
	if runtime.GOOS == "linux" && (memory.file == nil || path != "/dev/fd/4") {
		t.Errorf("on Linux the dictionary is an in-memory file at /dev/fd/4: %q %+v", path, memory)
	}
	if memory.file != nil {
		got, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", memory.file.Fd()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the in-memory dictionary reads %q, %v", got, err)
		}
	}
	memory.close()

	temp, err := tempRunFile("sphinx-dictionary", want)
	if err != nil {
		t.Fatal(err)
	}
	path = temp.pass(&exec.Cmd{})
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the temporary dictionary reads %q, %v", got, err)
	}
	temp.close()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary dictionary outlives its run: %v", err)
	}
}
