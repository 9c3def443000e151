package web_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	pathpkg "path"
	"regexp"
	"strings"
	"testing"

	"github.com/convengine/engine/examples/web"
)

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(http.StripPrefix("/demo", web.Handler()))
	defer srv.Close()
	for _, tc := range []struct{ path, status, typ string }{
		{"/demo/", "200", "text/html"},
		{"/demo/app.js", "200", "text/javascript"},
		{"/demo/style.css", "200", "text/css"},
		{"/demo/missing.js", "404", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Status[:3]; got != tc.status {
				t.Fatalf("status %s, want %s", resp.Status, tc.status)
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.typ) {
				t.Errorf("Content-Type %q, want %s", resp.Header.Get("Content-Type"), tc.typ)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
		})
	}
}

// TestFilesComplete checks that every file the page and its modules load is embedded.
func TestFilesComplete(t *testing.T) {
	files := web.Files()
	found := 0
	refs := regexp.MustCompile(`(?:from |import\(|new URL\(|src=|href=)"((?:\.\.?/)?[a-z][a-z0-9-]*\.(?:js|css))"`)
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, path)
		if err != nil {
			return err
		}
		for _, m := range refs.FindAllStringSubmatch(string(b), -1) {
			found++
			// Relative to the file: the desk's page (desk/) loads the client's style and parser.
			if _, err := fs.Stat(files, pathpkg.Join(pathpkg.Dir(path), m[1])); err != nil {
				t.Errorf("%s loads %s, which is not embedded", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(files, "index.html"); err != nil {
		t.Fatal(err)
	}
	if found < 8 { // index.html: style.css, app.js; app.js: four modules; wav.js: the worklet…
		t.Errorf("found %d references; the pattern no longer matches how the files load each other", found)
	}
}
