package jsonenc

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// ReadBodyWithin reads a JSON request body of at most limit bytes into v, as ReadBody and
// UnmarshalBody do, before deadline and while ctx lasts: past them, the read is cut short
// (through the connection's read deadline), and a body that did not arrive before the deadline
// is a 408 error.
func ReadBodyWithin(ctx context.Context, deadline time.Time, w http.ResponseWriter, r *http.Request, limit int64, v any) *BodyError {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	rc := http.NewResponseController(w)
	var (
		mu      sync.Mutex
		reading = true
	)
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if reading {
			_ = rc.SetReadDeadline(time.Now()) // a writer without deadlines reads on
		}
	})
	defer stop()
	data, err := ReadBody(w, r, limit, false)
	if err == nil {
		err = UnmarshalBody(data, v)
	}
	mu.Lock()
	reading = false
	mu.Unlock()
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return newError(http.StatusRequestTimeout, codeInvalidRequest, "the body did not arrive within the turn's time limit")
	}
	return err
}
