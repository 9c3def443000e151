// Package sse reads and writes server-sent events as the WHATWG HTML standard defines them.
//
// [Writer] writes the events of the engine's turn stream (start, status, speak, widget, error,
// done), numbered, with a keep-alive comment after a silence; the events produced together
// leave in one write and one flush, and none waits while the producer waits.
// [Writer.Follow] replays a turn kept in a log, batch by batch, after the client's
// [LastEventID], for the root's resume handler. [Reader]
// parses any event stream: the client reads turns with it, and tests read what the engine
// sent.
package sse
