package response

import (
	"io"
	"net/http"
	"time"

	"github.com/convengine/engine/audio"
)

// WriteWAV writes synthesized speech to an HTTP response as a WAV stream while it is being
// made: a streaming WAV header for 16-bit mono samples at rate, then the samples of pcm
// as they come, flushing each read; each write may wait writeTimeout for the client. It
// returns the bytes of samples written, the write's error (the client is gone or too slow) or
// the reader's.
func WriteWAV(w http.ResponseWriter, pcm io.Reader, rate int, writeTimeout time.Duration) (n int64, writeErr, readErr error) {
	rc := http.NewResponseController(w)
	defer rc.SetWriteDeadline(time.Time{}) // not to outlive the response on a kept-alive connection
	write := func(b []byte) error {
		if writeTimeout > 0 && rc.SetWriteDeadline(time.Now().Add(writeTimeout)) != nil {
			writeTimeout = 0 // a writer that cannot take deadlines just writes
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := write(audio.AppendWAVHeader(nil, rate, -1)); err != nil {
		return 0, err, nil
	}
	buf := make([]byte, 16<<10)
	for {
		m, rerr := pcm.Read(buf)
		if m > 0 {
			if err := write(buf[:m]); err != nil {
				return n, err, nil
			}
			n += int64(m)
		}
		if rerr == io.EOF {
			return n, nil, nil
		}
		if rerr != nil {
			return n, nil, rerr
		}
	}
}
