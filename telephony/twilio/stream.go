package twilio

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/telephony"
)

// The messages of a media stream, as Twilio documents them
// (https://www.twilio.com/docs/voice/media-streams/websocket-messages): from Twilio connected,
// start, media, dtmf, mark and stop; to Twilio media, mark and clear.
type message struct {
	Event     string `json:"event"`
	StreamSid string `json:"streamSid,omitempty"`
	Start     *struct {
		StreamSid        string            `json:"streamSid"`
		AccountSid       string            `json:"accountSid"`
		CallSid          string            `json:"callSid"`
		CustomParameters map[string]string `json:"customParameters"`
		MediaFormat      struct {
			Encoding   string `json:"encoding"`
			SampleRate int    `json:"sampleRate"`
			Channels   int    `json:"channels"`
		} `json:"mediaFormat"`
	} `json:"start,omitempty"`
	Media *struct {
		Track     string `json:"track,omitempty"`
		Timestamp string `json:"timestamp,omitempty"`
		Payload   string `json:"payload"`
	} `json:"media,omitempty"`
	DTMF *struct {
		Digit string `json:"digit"`
	} `json:"dtmf,omitempty"`
	Mark *struct {
		Name string `json:"name"`
	} `json:"mark,omitempty"`
}

// Limits of a stream.
const (
	maxMessage   = 64 << 10 // a message of Twilio's: 20 ms of audio is 160 bytes
	startTimeout = 10 * time.Second
	readTimeout  = 30 * time.Second // Twilio sends audio every 20 ms
	writeTimeout = 10 * time.Second
)

// serveStream serves a media stream: its upgrade signed by the tenant's auth token, then its
// start message's token, single use and bound to the call, then the call.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	entry, ok := s.o.Directory.Tenant(r.PathValue("tenant"))
	token := ""
	if ok {
		token = s.authToken(entry)
	}
	if !ok || !validSignature(token, r.Header.Get("X-Twilio-Signature"), s.streamURL(r.PathValue("tenant")), nil) {
		s.e.Logger().Warn("twilio: a media stream was refused: no such tenant, or a bad signature", "known", ok)
		engine.WriteProblem(w, engine.NewProblem(http.StatusUnauthorized, CodeBadSignature, "the upgrade's X-Twilio-Signature is missing or wrong"))
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true}) // Twilio sends no Origin
	if err != nil {
		return
	}
	ws.SetReadLimit(maxMessage)
	// The stream outlives the request's handler: the server's state of the request is freed.
	go s.stream(ws, entry, token)
}

// stream runs one media stream until it stops.
func (s *Server) stream(ws *websocket.Conn, entry telephony.Entry, authToken string) {
	defer ws.CloseNow()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, why := s.open(ctx, ws, entry)
	if st == nil {
		s.e.Logger().Warn("twilio: a media stream was refused", "tenant", entry.Tenant.Key, "why", why)
		ws.Close(websocket.StatusPolicyViolation, why)
		return
	}
	st.rest = &rest{client: s.o.Client, base: s.o.APIBaseURL, account: st.account, authToken: authToken, callSid: st.info.ID}
	call := s.o.Phone.Answer(ctx, entry, st.info, st)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		call.Run(ctx)
		cancel() // handed over or hung up: the stream is done
	}()
	st.read(ctx, call)
	cancel()
	<-ran
	ws.Close(websocket.StatusNormalClosure, "")
}

// stream is a media stream, the [telephony.Line] of its call.
type stream struct {
	ws        *websocket.Conn
	streamSid string
	account   string
	info      telephony.CallInfo
	rest      *rest
	mu        sync.Mutex // one write at a time, in order
	mulaw     []byte
}

// open reads the stream's connected and start messages and checks the start's token; it
// returns nil and why when the stream is refused.
func (s *Server) open(ctx context.Context, ws *websocket.Conn, entry telephony.Entry) (*stream, string) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var m message
	for m.Event != "start" {
		if err := readMessage(ctx, ws, &m); err != nil {
			return nil, "no start message"
		}
		if m.Event != "connected" && m.Event != "start" {
			return nil, "the stream did not start with connected and start"
		}
	}
	start := m.Start
	if start == nil || start.StreamSid == "" || start.CallSid == "" {
		return nil, "the start message names no stream or call"
	}
	f := start.MediaFormat
	if f.Encoding != "audio/x-mulaw" || f.SampleRate != telephony.LineRate || f.Channels != 1 {
		return nil, "the stream's audio is not 8 kHz mono μ-law"
	}
	t, err := openToken(s.o.Key, start.CustomParameters["token"])
	switch {
	case err != nil:
		return nil, "the stream's token is unknown"
	case t.Tenant != entry.Tenant.Key || t.CallSid != start.CallSid:
		return nil, "the stream's token is another call's"
	case time.Now().Unix() > t.Expires:
		return nil, "the stream's token expired"
	case entry.Config.Twilio.AccountSID != "" && start.AccountSid != entry.Config.Twilio.AccountSID:
		return nil, "the stream belongs to another Twilio account"
	}
	fresh, err := s.o.Replay.Claim(ctx, "twilio-stream:"+t.Nonce, time.Unix(t.Expires, 0).Add(time.Minute))
	switch {
	case err != nil:
		return nil, "the stream's token could not be checked"
	case !fresh:
		return nil, "the stream's token was used already"
	}
	return &stream{ws: ws, streamSid: start.StreamSid, account: start.AccountSid,
		info: telephony.CallInfo{ID: t.CallSid, From: t.From, To: t.To}}, ""
}

func readMessage(ctx context.Context, ws *websocket.Conn, m *message) error {
	typ, data, err := ws.Read(ctx)
	if err != nil {
		return err
	}
	*m = message{}
	if typ != websocket.MessageText || json.Unmarshal(data, m) != nil {
		return errBadMessage
	}
	return nil
}

// errBadMessage is a message that is not one of Twilio's JSON messages.
var errBadMessage = errors.New("twilio: a message that is not JSON")

// read hands the caller's audio, keys and marks to the call until the stream stops.
func (st *stream) read(ctx context.Context, call *telephony.Call) {
	var in inbound
	for {
		rctx, cancel := context.WithTimeout(ctx, readTimeout)
		typ, data, err := st.ws.Read(rctx)
		cancel()
		if err != nil || in.handle(call, typ, data) {
			return
		}
	}
}

// A callee is what a stream hands the caller's side to: a [telephony.Call].
type callee interface {
	Hear(pcm []int16)
	Press(key byte)
	Marked(name string)
	Arrived(at time.Time, mediaTime time.Duration)
}

// inbound is the reader's side of a stream, with its buffers.
type inbound struct {
	m   message
	b   []byte
	pcm []int16
}

// handle hands one message of Twilio's to call, and reports whether it was stop. A message
// that is not Twilio's JSON, or not what its event says, is dropped: the call goes on.
func (in *inbound) handle(call callee, typ websocket.MessageType, data []byte) (stop bool) {
	m := &in.m
	*m = message{}
	if typ != websocket.MessageText || json.Unmarshal(data, m) != nil {
		return false
	}
	switch m.Event {
	case "media":
		if m.Media == nil || (m.Media.Track != "" && m.Media.Track != "inbound") {
			return false
		}
		var err error
		if in.b, err = base64.StdEncoding.AppendDecode(in.b[:0], []byte(m.Media.Payload)); err != nil {
			return false
		}
		if ts, err := strconv.ParseInt(m.Media.Timestamp, 10, 64); err == nil && ts >= 0 && ts <= maxMediaTime {
			call.Arrived(time.Now(), time.Duration(ts)*time.Millisecond)
		}
		in.pcm = audio.MuLawDecode(in.pcm[:0], in.b)
		call.Hear(in.pcm)
	case "dtmf":
		if m.DTMF != nil && len(m.DTMF.Digit) == 1 {
			call.Press(m.DTMF.Digit[0])
		}
	case "mark":
		if m.Mark != nil {
			call.Marked(m.Mark.Name)
		}
	case "stop":
		return true
	}
	return false
}

// maxMediaTime bounds a media message's timestamp (milliseconds into the stream), a day, so
// that its duration cannot overflow.
const maxMediaTime = 24 * 60 * 60 * 1000

// write sends one message to Twilio, unless ctx has ended: a turn that barge-in stopped sends
// nothing more. The write itself is bounded by writeTimeout alone, never by ctx: a WebSocket
// write that its context cuts closes the connection, and the caller with it.
func (st *stream) write(ctx context.Context, v any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ws.Write(wctx, websocket.MessageText, data)
}

type outMedia struct {
	Payload string `json:"payload"`
}

type outMark struct {
	Name string `json:"name"`
}

// Play sends the audio as a media message of the stream.
func (st *stream) Play(ctx context.Context, pcm []int16) error {
	st.mu.Lock()
	st.mulaw = audio.MuLawEncode(st.mulaw[:0], pcm)
	payload := base64.StdEncoding.EncodeToString(st.mulaw)
	st.mu.Unlock()
	return st.write(ctx, struct {
		Event     string   `json:"event"`
		StreamSid string   `json:"streamSid"`
		Media     outMedia `json:"media"`
	}{"media", st.streamSid, outMedia{payload}})
}

// Mark sends a mark, which Twilio echoes once the audio before it played.
func (st *stream) Mark(ctx context.Context, name string) error {
	return st.write(ctx, struct {
		Event     string  `json:"event"`
		StreamSid string  `json:"streamSid"`
		Mark      outMark `json:"mark"`
	}{"mark", st.streamSid, outMark{name}})
}

// Clear empties Twilio's buffer of the stream's audio; Twilio echoes the marks it held.
func (st *stream) Clear(ctx context.Context) error {
	return st.write(ctx, struct {
		Event     string `json:"event"`
		StreamSid string `json:"streamSid"`
	}{"clear", st.streamSid})
}

// Transfer dials number in place of the stream, through the REST API.
func (st *stream) Transfer(ctx context.Context, number string) error {
	return st.rest.dial(ctx, number)
}

// Hangup ends the call through the REST API.
func (st *stream) Hangup(ctx context.Context) error { return st.rest.hangup(ctx) }
