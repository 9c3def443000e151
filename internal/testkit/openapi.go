package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/convengine/engine/docs"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/sse"
)

// OpenAPIDocument is the OpenAPI document, loaded once for every test that validates traffic
// against it.
var OpenAPIDocument = sync.OnceValues(func() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(docs.OpenAPI)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

type validatingTransport struct {
	t      testing.TB
	base   http.RoundTripper
	router routers.Router
	doc    *openapi3.T
}

// NewOpenAPITransport returns a RoundTripper that checks every exchange through base against
// docs/openapi.yaml: a request accepted must match it, every response must, and so must each
// event of a turn stream.
func NewOpenAPITransport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	doc, err := OpenAPIDocument()
	if err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	// Route by path alone: the document's server address is not the test server's.
	doc = cloneWithoutServers(doc)
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &validatingTransport{t: t, base: base, router: router, doc: doc}
}

func cloneWithoutServers(doc *openapi3.T) *openapi3.T {
	cp := *doc
	cp.Servers = nil
	return &cp
}

func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	route, params, routeErr := v.router.FindRoute(req)
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := v.base.RoundTrip(req)
	if err != nil || routeErr != nil {
		return resp, err // unknown routes answer 404 problems, checked by their own tests
	}
	in := &openapi3filter.RequestValidationInput{Request: req.Clone(req.Context()), PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
	in.Request.Body = io.NopCloser(bytes.NewReader(reqBody))
	requestValid := openapi3filter.ValidateRequest(req.Context(), in) == nil
	if resp.StatusCode/100 == 2 && !requestValid {
		v.t.Errorf("%s %s was accepted (%d) but does not match docs/openapi.yaml: %v", req.Method, req.URL.Path, resp.StatusCode,
			openapi3filter.ValidateRequest(req.Context(), in))
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if sse {
		out.Options.ExcludeResponseBody = true
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		v.t.Errorf("%s %s answered %d that does not match docs/openapi.yaml: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	if sse {
		v.checkEvents(route, body)
	}
	return resp, nil
}

// checkEvents validates each event's data against the schema the document names for it.
func (v *validatingTransport) checkEvents(route *routers.Route, body []byte) {
	media := route.Operation.Responses.Status(200).Value.Content.Get("text/event-stream")
	schemas, _ := media.Extensions["x-events"].(map[string]any)
	read := enginetest.ReadEvents
	if strings.HasPrefix(route.Path, "/engine/handoff/") {
		read = readNumbered
	}
	events, err := read(bytes.NewReader(body))
	if err != nil {
		v.t.Errorf("the stream: %v", err)
	}
	for _, ev := range events {
		ref, _ := schemas[ev.Name].(map[string]any)["$ref"].(string)
		s := v.doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		if s == nil {
			v.t.Errorf("event %q is not described in docs/openapi.yaml", ev.Name)
			continue
		}
		var data any
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			v.t.Errorf("event %s: %v", ev.Name, err)
			continue
		}
		if err := s.Value.VisitJSON(data, openapi3.EnableJSONSchema2020()); err != nil { // the document is OpenAPI 3.1: const and the rest of JSON Schema 2020-12 hold
			v.t.Errorf("event %s does not match docs/openapi.yaml: %v\n%s", ev.Name, err, ev.Data)
		}
	}
}

// readNumbered reads a stream whose event ids increase without counting 1, 2, 3: a handoff's
// stream numbers its events as its store does, and leaves out the customer's own messages.
func readNumbered(r io.Reader) ([]enginetest.Event, error) {
	sr := sse.NewReader(r, 8<<20)
	var out []enginetest.Event
	last := 0
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		id, _ := strconv.Atoi(ev.ID)
		if id <= last || bytes.IndexByte(ev.Data, '\n') >= 0 || !json.Valid(ev.Data) {
			return out, fmt.Errorf("event %q (%s) after %d: ids must increase, and data be one line of JSON", ev.ID, ev.Name, last)
		}
		last = id
		out = append(out, enginetest.Event{ID: id, Name: ev.Name, Data: json.RawMessage(ev.Data), Pings: ev.Comments})
	}
}
