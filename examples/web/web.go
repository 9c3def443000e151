// Package web is the engine's reference web client: a single page, in plain JavaScript modules
// with no build step, that creates a device-bound session (an ES256 key from WebCrypto signing
// a DPoP proof per request), streams turns, draws their widgets, plays answers through
// POST /engine/tts, confirms actions behind a passcode and records voice turns as 16 kHz WAV.
//
// The reference server (cmd/engine) serves it at /demo/ next to the offline demo tenant:
//
//	mux.Handle("GET /demo/", http.StripPrefix("/demo", web.Handler()))
//
// The files are embedded, so a Go binary serves them with nothing else installed. The page
// talks to the engine of its own origin; ?key=pk_… picks another engine key than pk_demo, and
// ?gate=passkey (the page's "Confirm with" control) confirms actions with a passkey. On a
// tenant whose bank enrols devices, the page offers the bank's enrolment (enrol.js, the demo's
// stand-in for the bank's own app, which calls the bank's routes at /demo/bank/).
package web

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// contentSecurityPolicy lets the page load its own files and talk to its own origin only;
// blob: is for the synthesized answers the audio element plays.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; " +
	"connect-src 'self'; media-src 'self' blob:; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Files returns the client's files: index.html, its modules and its style sheet.
func Files() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the directory is embedded: it exists
	}
	return sub
}

// Handler returns a handler that serves the client's files from the root of the URL space
// it is given (strip the mount prefix first), with a strict Content-Security-Policy and no
// caching, so that a new server version is never met by old scripts.
func Handler() http.Handler {
	fileServer := http.FileServerFS(Files())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Permissions-Policy", "microphone=(self), camera=(), geolocation=()")
		h.Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	})
}
