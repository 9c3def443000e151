package mcptools

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/convengine/engine"
)

// maxResultBytes bounds what one result hands to the model.
const maxResultBytes = 1 << 20

// convertResult turns an MCP result into the engine's: structured content when present, else
// the text content (JSON as is, other text wrapped).
func convertResult(res *mcp.CallToolResult) engine.ToolResult {
	var content json.RawMessage
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			content = b
		}
	}
	if content == nil {
		var text strings.Builder
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text.WriteString(t.Text)
			}
		}
		s := strings.TrimSpace(text.String())
		switch {
		case len(s) > maxResultBytes:
			return errorResult("result_too_large", "the tool's result was too large")
		case json.Valid([]byte(s)) && s != "" && (s[0] == '{' || s[0] == '['):
			content = json.RawMessage(s)
		case res.IsError:
			return errorResult("tool_error", s)
		default:
			content, _ = json.Marshal(map[string]string{"text": s})
		}
	}
	if len(content) > maxResultBytes {
		return errorResult("result_too_large", "the tool's result was too large")
	}
	return engine.ToolResult{Content: content, IsError: res.IsError}
}

func errorResult(code, message string) engine.ToolResult {
	b, _ := json.Marshal(map[string]string{"error": code, "message": message})
	return engine.ToolResult{Content: b, IsError: true}
}
