package demobank

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPHandler serves the bank's tools over the Model Context Protocol (streamable HTTP), so that
// the demo tenant can reach the same bank through package mcptools instead of httptools. Each
// tool call runs against b with the X-Token, X-Request-ID and Idempotency-Key headers of the
// HTTP request that carried it: the MCP session authorizes nothing by itself.
func MCPHandler(b *Bank) http.Handler {
	var defs []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Method      string          `json:"method"`
		Path        string          `json:"path"`
		Action      bool            `json:"action"`
	}
	if err := json.Unmarshal(ToolsJSON, &defs); err != nil {
		panic(fmt.Sprintf("demobank: tools.json: %v", err)) // embedded and tested: cannot happen
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "demobank", Version: "1"}, nil)
	for _, d := range defs {
		destructive := d.Action
		server.AddTool(&mcp.Tool{
			Name: d.Name, Description: d.Description, InputSchema: d.Parameters,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: !d.Action, DestructiveHint: &destructive},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return b.callTool(ctx, d.Method, d.Path, req), nil
		})
	}
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
}

// callTool runs one tool as the HTTP request its definition describes.
func (b *Bank) callTool(ctx context.Context, method, path string, req *mcp.CallToolRequest) *mcp.CallToolResult {
	var args map[string]any
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return toolError(`{"error":"invalid_request","message":"arguments must be a JSON object"}`)
		}
	}
	var body []byte
	if method == http.MethodGet {
		q := url.Values{}
		for k, v := range args {
			q.Set(k, fmt.Sprint(v))
		}
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
	} else {
		body, _ = json.Marshal(args)
	}
	r := httptest.NewRequestWithContext(ctx, method, path, bytes.NewReader(body))
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if req.Extra != nil {
		for _, h := range []string{"X-Token", "X-Request-ID", "Idempotency-Key"} {
			if v := req.Extra.Header.Get(h); v != "" {
				r.Header.Set(h, v)
			}
		}
	}
	rec := httptest.NewRecorder()
	b.ServeHTTP(rec, r)
	text := strings.TrimSpace(rec.Body.String())
	if rec.Code >= 400 {
		return toolError(text)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(text)}
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
