package voice_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// TestStreamFrameBehindTheUpgrade sends the upgrade request and a first message in one write,
// as a client may: the server, which read both at once, still answers the message.
func TestStreamFrameBehindTheUpgrade(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	h.shutdownAtEnd(t)

	conn, err := net.Dial("tcp", strings.TrimPrefix(h.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))

	var req bytes.Buffer
	req.WriteString("GET /engine/stream HTTP/1.1\r\nHost: engine\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n")
	for name, values := range headers() {
		req.WriteString(name + ": " + values[0] + "\r\n")
	}
	req.WriteString("\r\n")
	req.Write(maskedTextFrame([]byte(`{"type":"cancel"}`)))
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}

	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", resp.StatusCode)
	}
	head := make([]byte, 2)
	if _, err := io.ReadFull(br, head); err != nil {
		t.Fatal(err)
	}
	if head[0] != 0x81 || head[1]&0x80 != 0 || head[1] >= 126 {
		t.Fatalf("frame header % x, want a short unmasked text frame", head)
	}
	payload := make([]byte, head[1])
	if _, err := io.ReadFull(br, payload); err != nil {
		t.Fatal(err)
	}
	if string(payload) != `{"type":"cancelled"}` {
		t.Errorf("the first message is answered %s", payload)
	}
}

// maskedTextFrame is a client's text frame of fewer than 126 bytes.
func maskedTextFrame(payload []byte) []byte {
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	f := append([]byte{0x81, 0x80 | byte(len(payload))}, key[:]...)
	for i, b := range payload {
		f = append(f, b^key[i%4])
	}
	return f
}
