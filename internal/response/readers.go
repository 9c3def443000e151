package response

import (
	"io"
	"sync"
)

// Counted returns r, counting the bytes read from it, which calls done once with the count: at
// r's end (with a nil error), its failure, or its close, whichever comes first. The engine
// meters a synthesis so, as it is written.
func Counted(r io.ReadCloser, done func(n int64, err error)) io.ReadCloser {
	return &counted{ReadCloser: r, done: done}
}

type counted struct {
	io.ReadCloser
	n    int64
	done func(n int64, err error)
	once sync.Once
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	switch {
	case err == io.EOF:
		c.once.Do(func() { c.done(c.n, nil) })
	case err != nil:
		c.once.Do(func() { c.done(c.n, err) })
	}
	return n, err
}

func (c *counted) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(func() { c.done(c.n, nil) })
	return err
}

// OnClose returns r, which calls release once, when it is first closed: a synthesis gives its
// slot back so.
func OnClose(r io.ReadCloser, release func()) io.ReadCloser {
	return &onClose{ReadCloser: r, release: release}
}

type onClose struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (c *onClose) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.release)
	return err
}
