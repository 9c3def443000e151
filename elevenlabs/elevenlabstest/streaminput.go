package elevenlabstest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
)

// Streams returns how many input streams were opened.
func (s *Server) Streams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams
}

// streamInput serves the input-streaming WebSocket: text comes in chunks, and what it holds is
// spoken at a flush (or once it holds 50 characters, with try_trigger_generation), each message
// of audio with the alignment of the characters it speaks; the closing text "" speaks what is
// left and sends isFinal.
func (s *Server) streamInput(w http.ResponseWriter, r *http.Request, voice string) {
	q := r.URL.Query()
	switch {
	case s.Fault == Status:
		code := map[int]string{429: "too_many_concurrent_requests"}[s.Status]
		detail(w, s.Status, code, "stand-in fault")
		return
	case q.Get("output_format") != "pcm_16000":
		detail(w, http.StatusBadRequest, "invalid_output_format", "this stand-in speaks pcm_16000")
		return
	case len(s.Voices) > 0 && !slices.Contains(s.Voices, voice):
		detail(w, http.StatusNotFound, "voice_not_found", "A voice with the voice_id "+voice+" was not found.")
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	s.mu.Lock()
	s.streams++
	s.mu.Unlock()
	ctx := r.Context()
	write := func(v any) bool {
		b, _ := json.Marshal(v)
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return conn.Write(wctx, websocket.MessageText, b) == nil
	}
	// speak sends the audio of text, in messages of 0.1 s, after the first-byte latency.
	speak := func(text string) bool {
		if strings.TrimSpace(text) == "" {
			return true
		}
		s.mu.Lock()
		s.texts = append(s.texts, text)
		s.mu.Unlock()
		if s.Fault == Stall {
			return true // reads on, and sends nothing
		}
		select {
		case <-time.After(s.FirstByte):
		case <-ctx.Done():
			return false
		}
		// Messages of two characters' audio; the last takes what is left, so that the
		// closing space comes with the last word, as ElevenLabs' alignment has it.
		chars := []rune(text)
		for len(chars) > 0 {
			part := chars[:min(2, len(chars))]
			if strings.TrimSpace(string(chars[len(part):])) == "" {
				part = chars
			}
			msg := map[string]any{"audio": base64.StdEncoding.EncodeToString(Tone(len(part))), "isFinal": nil,
				"alignment": alignment(part), "normalizedAlignment": alignment(part)}
			if !write(msg) {
				return false
			}
			if s.Fault == CutOff {
				conn.Close(websocket.StatusInternalError, "stand-in fault")
				return false
			}
			chars = chars[len(part):]
		}
		return true
	}
	first, authorized := true, r.Header.Get("xi-api-key") == s.Key
	var held strings.Builder
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			Text                 *string `json:"text"`
			Flush                bool    `json:"flush"`
			TryTriggerGeneration bool    `json:"try_trigger_generation"`
			Key                  string  `json:"xi_api_key"`
		}
		if json.Unmarshal(data, &m) != nil || m.Text == nil || !utf8.ValidString(*m.Text) {
			write(map[string]any{"message": "Invalid message", "error": "invalid_request", "code": 1008})
			conn.Close(websocket.StatusPolicyViolation, "invalid message")
			return
		}
		if first {
			first, authorized = false, authorized || (m.Key != "" && m.Key == s.Key)
			if !authorized {
				write(map[string]any{"message": "Invalid API key", "error": "invalid_api_key", "code": 1008})
				conn.Close(websocket.StatusPolicyViolation, "invalid_api_key")
				return
			}
			continue // the first message's text is " "
		}
		held.WriteString(*m.Text)
		if utf8.RuneCountInString(held.String()) > s.MaxCharacters {
			write(map[string]any{"message": "text is over the model's limit", "error": "text_too_long", "code": 1008})
			conn.Close(websocket.StatusPolicyViolation, "text_too_long")
			return
		}
		switch {
		case *m.Text == "": // the end of the stream
			if !speak(held.String()) {
				return
			}
			write(map[string]any{"audio": nil, "isFinal": true, "normalizedAlignment": nil, "alignment": nil})
			conn.Close(websocket.StatusNormalClosure, "")
			return
		case m.Flush || (m.TryTriggerGeneration && held.Len() >= 50):
			text := held.String()
			held.Reset()
			if !speak(text) {
				return
			}
		}
	}
}

// alignment is the alignment of the characters a message of audio speaks: each lasts 50 ms.
func alignment(chars []rune) map[string]any {
	out := map[string]any{"chars": []string{}, "charStartTimesMs": []int{}, "charDurationsMs": []int{}}
	for i, c := range chars {
		out["chars"] = append(out["chars"].([]string), string(c))
		out["charStartTimesMs"] = append(out["charStartTimesMs"].([]int), 50*i)
		out["charDurationsMs"] = append(out["charDurationsMs"].([]int), 50)
	}
	return out
}
