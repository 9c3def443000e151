package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
)

// Buffers of a voice socket's connection. net/http hands a hijacked connection its own
// 4 KiB reader and writer, which an idle socket would hold for as long as it is open. These
// are smaller: a frame larger than a buffer is read or written through it in more than one
// system call, which the socket's message rate makes negligible.
const (
	socketReadBuffer  = 1 << 10
	socketWriteBuffer = 1 << 10
)

// smallBuffers is the ResponseWriter a voice socket is accepted through: its Hijack replaces
// the server's buffers with smaller ones, and keeps the connection, whose write deadline
// bounds each message the socket writes.
type smallBuffers struct {
	http.ResponseWriter
	conn net.Conn
}

// Hijack takes the connection over from the server, with buffers of socketReadBuffer and
// socketWriteBuffer bytes. Bytes the server had read ahead (a frame sent right behind the
// upgrade request) are read first.
func (w *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.conn = conn
	if err := rw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("flushing the upgrade response: %w", err)
	}
	if n := rw.Reader.Buffered(); n > 0 {
		ahead, _ := rw.Reader.Peek(n)
		conn = &readAheadConn{Conn: conn, ahead: bytes.Clone(ahead)}
	}
	return conn, bufio.NewReadWriter(bufio.NewReaderSize(conn, socketReadBuffer), bufio.NewWriterSize(conn, socketWriteBuffer)), nil
}

// readAheadConn is a connection whose first bytes were already read from it.
type readAheadConn struct {
	net.Conn
	ahead []byte
}

func (c *readAheadConn) Read(p []byte) (int, error) {
	if len(c.ahead) > 0 {
		n := copy(p, c.ahead)
		c.ahead = c.ahead[n:]
		if len(c.ahead) == 0 {
			c.ahead = nil
		}
		return n, nil
	}
	return c.Conn.Read(p)
}
