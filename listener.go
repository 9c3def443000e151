package engine

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/convengine/engine/internal/headers"
)

// Listener wraps ln, on which srv serves the engine over plain-text HTTP/1.1 (the reference
// server, or a host behind a TLS-terminating proxy), for what a handler alone cannot do:
//
//   - Forwarded header names keep the client's spelling. Go's server canonicalises header names
//     before any handler sees them, so X-Engine-Forward-X-Tenant-ID would reach the backend as
//     X-Tenant-Id; the listener reads the names from the connection's bytes, and the backend
//     receives X-Tenant-ID byte for byte. HTTP/2 and HTTP/3 send every name in lower case, and
//     over them (or without this listener) what arrives is what Go's server made of it.
//   - The header blocks that connections are still sending hold at most Config.HeaderMemory
//     bytes together: a connection whose header bytes would pass it is closed, so that many
//     connections each sending a block just under srv.MaxHeaderBytes, slowly, cannot hold the
//     process's memory.
//   - A header block larger than srv.MaxHeaderBytes is answered with an RFC 9457 problem
//     (431 headers_too_large, with the request's X-Request-ID when it came before the limit) and
//     logged, instead of Go's plain-text 431.
//
// It sets srv.ConnContext, calling the one already set first. Serve srv on the listener it
// returns: srv.Serve(e.Listener(srv, ln)). Over TLS served by srv itself the listener sees only
// ciphertext and changes nothing.
func (e *Engine) Listener(srv *http.Server, ln net.Listener) net.Listener {
	return headers.Wrap(srv, ln, &headers.ScanOptions{
		Take: e.headerMemory.Take,
		Give: e.headerMemory.Give,
		MemoryFull: func() {
			if e.obs.Overload != nil {
				e.obs.Overload(context.Background(), OverloadEvent{Bound: BoundHeaders})
			}
			e.log.Debug("a connection closed: the header blocks being received fill the header memory", "limit", e.headerMemory.Limit)
		},
		TooLarge: e.headersTooLarge,
	})
}

// headersTooLarge answers a header block past limit with a problem, and logs it.
func (e *Engine) headersTooLarge(conn io.Writer, id string, limit int) {
	if !headers.ValidRequestID(id, e.hostChoosesEnvironment()) {
		id = ""
	}
	p := newProblem(http.StatusRequestHeaderFieldsTooLarge, CodeHeadersTooLarge,
		"the request's header block is larger than "+strconv.Itoa(limit)+" bytes")
	p.RequestID = id
	body, _ := json.Marshal(p)
	// Logged first: once the client has the answer, the record exists.
	e.log.Warn("request headers too large", "requestId", id, "limit", limit)
	headers.WriteTooLarge(conn, body, HeaderEngineVersion, Version, HeaderRequestID, id)
	if e.obs.Request != nil {
		e.obs.Request(context.Background(), RequestEvent{Method: "OTHER", Status: http.StatusRequestHeaderFieldsTooLarge, Code: CodeHeadersTooLarge, RequestID: id})
	}
}
