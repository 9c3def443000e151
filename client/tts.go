package client

import (
	"context"
	"fmt"
	"io"
	"mime"
)

// TTS synthesizes text with voice ("" for the tenant's default) and returns the WAV audio as
// it streams in. The caller closes it.
func (c *Client) TTS(ctx context.Context, text, voice string) (io.ReadCloser, error) {
	body := struct {
		Text  string `json:"text"`
		Voice string `json:"voice,omitempty"`
	}{text, voice}
	resp, err := c.postJSON(ctx, PathTTS, body, "audio/wav")
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "audio/wav" && mt != "audio/x-wav" && mt != "audio/wave" {
		closeOnly(resp)
		return nil, fmt.Errorf("client: the speech answered %q, not audio/wav", mt)
	}
	return resp.Body, nil
}
