package twilio_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/telephony/twilio"
)

// The fake Twilio of these tests plays Twilio's part of a call as Twilio documents it: the
// voice webhook, signed as its "Webhooks security" page and the helper libraries'
// RequestValidator sign it; the TwiML's <Connect><Stream>; the media stream's messages
// (https://www.twilio.com/docs/voice/media-streams/websocket-messages): connected, start
// (with the <Parameter>s as customParameters), media every 20 ms of 160 μ-law bytes with its
// timestamp, dtmf, and stop; the audio the server sends played in real time from a buffer, each
// mark echoed once the audio before it played, and on clear the buffer emptied and the marks
// it held echoed at once ("Twilio ... sends back mark messages matching any remaining mark
// messages", the clear message's section). The shapes follow Twilio's samples too
// (twilio-samples/speech-assistant-openai-realtime-api-node's index.js, which answers marks and
// sends clear on barge-in).

const (
	accountSid = "AC0123456789abcdef0123456789abcdef"
	frame      = 160 // 20 ms of 8 kHz audio
)

// twilioREST stands in for Twilio's REST API: it keeps each Update Call request.
type twilioREST struct {
	*httptest.Server
	mu      sync.Mutex
	updates []url.Values
	got     chan url.Values
}

func newTwilioREST(t testing.TB, authToken string) *twilioREST {
	r := &twilioREST{got: make(chan url.Values, 16)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, pass, ok := req.BasicAuth()
		if !ok || user != accountSid || pass != authToken || req.Method != http.MethodPost ||
			!strings.HasPrefix(req.URL.Path, "/2010-04-01/Accounts/"+accountSid+"/Calls/CA") || !strings.HasSuffix(req.URL.Path, ".json") {
			http.Error(w, `{"code":20003,"message":"Authenticate"}`, http.StatusUnauthorized)
			return
		}
		req.ParseForm()
		r.mu.Lock()
		r.updates = append(r.updates, req.PostForm)
		r.mu.Unlock()
		r.got <- req.PostForm
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"sid":%q,"status":"in-progress"}`, strings.TrimSuffix(req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:], ".json"))
	}))
	t.Cleanup(r.Close)
	return r
}

// wait returns the next update of the call, or fails after d.
func (r *twilioREST) wait(t testing.TB, d time.Duration) url.Values {
	t.Helper()
	select {
	case f := <-r.got:
		return f
	case <-time.After(d):
		t.Fatal("Twilio's REST API was not called")
		return nil
	}
}

// fakeCall is one call of the fake Twilio.
type fakeCall struct {
	t       testing.TB
	ws      *websocket.Conn
	sid     string
	stream  string
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	writeMu sync.Mutex

	mu       sync.Mutex
	outgoing []int16 // the caller's speech still to send
	buffer   []item  // the server's audio and marks still to play
	heard    []int16 // what the caller heard
	lastAt   time.Time
	clears   int
	marks    int // marks echoed after their audio played
	closed   error
}

// item is audio to play, or a mark.
type item struct {
	pcm  []int16
	mark string
}

// webhook posts the voice webhook of a call from to to, signed with authToken, and returns the
// response.
func webhook(t testing.TB, base, authToken, sid, from, to string) *http.Response {
	t.Helper()
	form := url.Values{"CallSid": {sid}, "AccountSid": {accountSid}, "From": {from}, "To": {to},
		"CallStatus": {"ringing"}, "Direction": {"inbound"}, "ApiVersion": {"2010-04-01"}}
	req, _ := http.NewRequest(http.MethodPost, base+twilio.PathVoice, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Twilio-Signature", twilio.Signature(authToken, base+twilio.PathVoice, form))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// connect is the TwiML's <Connect><Stream>.
type connect struct {
	Stream struct {
		URL    string `xml:"url,attr"`
		Params []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"Parameter"`
	} `xml:"Connect>Stream"`
}

// answer reads the webhook's TwiML: the stream's URL and token.
func answer(t testing.TB, resp *http.Response) (streamURL, token string) {
	t.Helper()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/xml") {
		t.Fatalf("webhook: %d %s", resp.StatusCode, body)
	}
	var c connect
	if err := xml.Unmarshal(body, &c); err != nil {
		t.Fatalf("TwiML %s: %v", body, err)
	}
	for _, p := range c.Stream.Params {
		if p.Name == "token" {
			token = p.Value
		}
	}
	return c.Stream.URL, token
}

// dialStream opens the media stream at streamURL as Twilio does, its upgrade signed with
// authToken; the error is the upgrade's.
func dialStream(t testing.TB, streamURL, authToken string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{"X-Twilio-Signature": {twilio.Signature(authToken, streamURL, nil)}}
	return websocket.Dial(t.Context(), streamURL, &websocket.DialOptions{HTTPHeader: h})
}

// startCall sends connected and start on ws, with token as the custom parameter, and starts
// playing the call in real time.
func startCall(t testing.TB, ws *websocket.Conn, sid, token string) *fakeCall {
	t.Helper()
	ws.SetReadLimit(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	c := &fakeCall{t: t, ws: ws, sid: sid, stream: "MZ" + sid[2:], ctx: ctx, cancel: cancel, lastAt: time.Now()}
	c.send(map[string]any{"event": "connected", "protocol": "Call", "version": "1.0.0"})
	c.send(map[string]any{"event": "start", "sequenceNumber": "1", "streamSid": c.stream, "start": map[string]any{
		"streamSid": c.stream, "accountSid": accountSid, "callSid": sid, "tracks": []string{"inbound"},
		"customParameters": map[string]string{"token": token},
		"mediaFormat":      map[string]any{"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1}}})
	c.wg.Add(2)
	go c.receive()
	go c.clock()
	t.Cleanup(c.hangUp)
	return c
}

func (c *fakeCall) send(v any) {
	b, _ := json.Marshal(v)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.ws.Write(c.ctx, websocket.MessageText, b)
}

// receive reads the server's messages: audio to the buffer, marks behind it, clear.
func (c *fakeCall) receive() {
	defer c.wg.Done()
	for {
		_, data, err := c.ws.Read(c.ctx)
		if err != nil {
			c.mu.Lock()
			c.closed = err
			c.mu.Unlock()
			return
		}
		var m struct {
			Event     string `json:"event"`
			StreamSid string `json:"streamSid"`
			Media     struct {
				Payload string `json:"payload"`
			} `json:"media"`
			Mark struct {
				Name string `json:"name"`
			} `json:"mark"`
		}
		if err := json.Unmarshal(data, &m); err != nil || m.StreamSid != c.stream {
			c.t.Errorf("a message Twilio would refuse: %s", data)
			continue
		}
		c.mu.Lock()
		switch m.Event {
		case "media":
			b, err := base64.StdEncoding.DecodeString(m.Media.Payload)
			if err != nil {
				c.t.Errorf("media payload: %v", err)
			}
			c.buffer = append(c.buffer, item{pcm: audio.MuLawDecode(nil, b)})
			c.lastAt = time.Now()
		case "mark":
			c.buffer = append(c.buffer, item{mark: m.Mark.Name})
		case "clear":
			c.clears++
			for _, it := range c.buffer {
				if it.mark != "" {
					c.echo(it.mark)
				}
			}
			c.buffer = nil
		default:
			c.t.Errorf("unknown event %q", m.Event)
		}
		c.mu.Unlock()
	}
}

// echo sends a mark back; c.mu is held.
func (c *fakeCall) echo(name string) {
	go c.send(map[string]any{"event": "mark", "sequenceNumber": "0", "streamSid": c.stream, "mark": map[string]string{"name": name}})
}

// clock runs every 20 ms: it sends the caller's next frame (speech or silence) and plays the
// next 20 ms of the buffer, echoing the marks it reaches.
func (c *fakeCall) clock() {
	defer c.wg.Done()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	for n := 0; ; n++ {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		c.mu.Lock()
		out := make([]int16, frame)
		k := copy(out, c.outgoing)
		c.outgoing = c.outgoing[k:]
		left := frame
		for left > 0 && len(c.buffer) > 0 {
			it := &c.buffer[0]
			if it.mark != "" {
				c.echo(it.mark)
				c.marks++
				c.buffer = c.buffer[1:]
				continue
			}
			k := min(left, len(it.pcm))
			c.heard = append(c.heard, it.pcm[:k]...)
			it.pcm, left = it.pcm[k:], left-k
			if len(it.pcm) == 0 {
				c.buffer = c.buffer[1:]
			}
		}
		for len(c.buffer) > 0 && c.buffer[0].mark != "" { // marks right behind played audio
			c.echo(c.buffer[0].mark)
			c.marks++
			c.buffer = c.buffer[1:]
		}
		c.mu.Unlock()
		c.send(map[string]any{"event": "media", "sequenceNumber": strconv.Itoa(n + 2), "streamSid": c.stream,
			"media": map[string]string{"track": "inbound", "chunk": strconv.Itoa(n + 1),
				"timestamp": strconv.FormatInt(time.Since(start).Milliseconds(), 10),
				"payload":   base64.StdEncoding.EncodeToString(audio.MuLawEncode(nil, out))}})
	}
}

// say queues speech (16 kHz) to be sent as the caller's, resampled to the line's 8 kHz.
func (c *fakeCall) say(pcm16k []int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outgoing = append(c.outgoing, audio.Resample(pcm16k, 16000, 8000)...)
}

// keys presses keys on the keypad, 150 ms apart.
func (c *fakeCall) keys(s string) {
	for _, k := range s {
		c.send(map[string]any{"event": "dtmf", "streamSid": c.stream, "sequenceNumber": "0",
			"dtmf": map[string]string{"track": "inbound_track", "digit": string(k)}})
		time.Sleep(150 * time.Millisecond)
	}
}

// waitAnswer waits until the caller sent all its speech, then heard an answer to it (audio that
// came after, or after since when it is not zero), to its end: no new audio for quiet. It fails
// after limit.
func (c *fakeCall) waitAnswer(since time.Time, quiet, limit time.Duration) {
	c.t.Helper()
	if !c.answered(since, quiet, limit) {
		c.t.Fatal("no answer came, or it did not end")
	}
}

// answered reports whether an answer came and ended (see waitAnswer) within limit.
func (c *fakeCall) answered(since time.Time, quiet, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	sent := since
	for time.Now().Before(deadline) {
		c.mu.Lock()
		if sent.IsZero() && len(c.outgoing) == 0 {
			sent = time.Now()
		}
		done := !sent.IsZero() && c.lastAt.After(sent) && len(c.buffer) == 0 && time.Since(c.lastAt) > quiet
		c.mu.Unlock()
		if done {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// waitPlaying waits until the server's audio plays, or fails after limit.
func (c *fakeCall) waitPlaying(limit time.Duration) {
	c.t.Helper()
	testkit.Poll(c.t, limit, "no answer played", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.outgoing) == 0 && len(c.buffer) > 0
	})
}

// heardSeconds is how much of the server's audio the caller heard.
func (c *fakeCall) heardSeconds() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(len(c.heard)) / 8000
}

// hangUp sends stop and closes the stream.
func (c *fakeCall) hangUp() {
	c.send(map[string]any{"event": "stop", "sequenceNumber": "0", "streamSid": c.stream,
		"stop": map[string]string{"accountSid": accountSid, "callSid": c.sid}})
	c.cancel()
	c.ws.Close(websocket.StatusNormalClosure, "")
	c.wg.Wait()
}
