package voice

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine/internal/jsonenc"
)

// frame is one message for the writer: data to send, or a close.
type frame struct {
	data []byte
	// speak marks a speak message, which the writer may join with the speak messages queued
	// behind it.
	speak bool
	// pooled marks data taken from audioBuffers, given back once written.
	pooled bool
	close  websocket.StatusCode
	reason string
}

// Outcomes of push.
const (
	queued = iota
	queueFull
	queueClosed // a close was queued, or the socket ended
)

// push queues f for the writer, and starts the writer when it does not run. When the queue
// holds SendQueue messages, push waits for room while wait is set (until ctx or the socket
// ends: queueClosed), and answers queueFull otherwise. A close is queued whatever the room.
func (c *voiceConn) push(ctx context.Context, f frame, wait bool) int {
	c.mu.Lock()
	for f.close == 0 && len(c.queue) >= c.opts.SendQueue && !c.closing && !c.ended {
		if !wait {
			c.mu.Unlock()
			return queueFull
		}
		if c.space == nil {
			c.space = make(chan struct{})
		}
		space := c.space
		c.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return queueClosed
		case <-c.ctx.Done():
			return queueClosed
		}
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	if c.closing || c.ended {
		return queueClosed
	}
	c.queue = append(c.queue, f)
	c.closing = f.close != 0
	if !c.writing {
		c.writing = true
		c.workers.Add(1)
		go c.writeLoop()
	}
	return queued
}

// send queues a message for the writer, waiting while the queue is full. It reports false
// when ctx or the socket ended first.
func (c *voiceConn) send(ctx context.Context, data []byte) bool {
	return c.push(ctx, frame{data: data}, true) == queued
}

// sendAudio queues an audio message from audioMessage, as send does; the buffer goes back to
// audioBuffers once written.
func (c *voiceConn) sendAudio(ctx context.Context, data []byte) bool {
	return c.push(ctx, frame{data: data, pooled: true}, true) == queued
}

// sendSpeak queues a speak message of delta, as send does.
func (c *voiceConn) sendSpeak(ctx context.Context, delta string) bool {
	return c.push(ctx, frame{data: speakMessage(delta), speak: true}, true) == queued
}

// trySend queues a message from the reader, which must not wait: a client whose queue is
// full while it keeps sending is closed with 1008, and trySend reports false. A message for
// a socket that is closing is dropped.
func (c *voiceConn) trySend(data []byte) bool {
	if c.push(c.ctx, frame{data: data}, false) == queueFull {
		c.ws.Close(websocket.StatusPolicyViolation, "the client does not read its messages")
		return false
	}
	return true
}

// goAway closes the socket with 1012 (service restart) once the queued messages are written:
// the client connects again, to another replica, and its conversation goes on there.
func (c *voiceConn) goAway() {
	c.push(c.ctx, frame{close: websocket.StatusServiceRestart, reason: "the server is restarting; connect again"}, false)
}

// abort stops the running turn and closes the socket at once. The socket's own context stays
// until the close handshake is done, or the reader would cut the connection without it.
func (c *voiceConn) abort(code websocket.StatusCode, reason string) {
	c.stopTurns()
	c.ws.Close(code, reason)
}

// writeLoop writes the queued messages in order, and returns when the queue is empty.
func (c *voiceConn) writeLoop() {
	defer c.workers.Done()
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || c.ctx.Err() != nil {
			c.queue = nil
			c.writing = false
			c.mu.Unlock()
			return
		}
		f := c.queue[0]
		c.queue[0] = frame{}
		c.queue = c.queue[1:]
		// Speak messages waiting one behind the other go out as one: a client that reads
		// slower than the model writes gets fewer, longer deltas rather than falling behind.
		for f.speak && len(c.queue) > 0 && c.queue[0].speak && len(f.data) < maxJoinedSpeak {
			f.data = joinSpeak(f.data, c.queue[0].data)
			c.queue[0] = frame{}
			c.queue = c.queue[1:]
		}
		if c.space != nil {
			close(c.space)
			c.space = nil
		}
		c.mu.Unlock()
		if f.close != 0 {
			c.ws.Close(f.close, f.reason)
			continue
		}
		// A deadline on the connection rather than a context with a time-out: the context
		// would cost a timer and a goroutine hook per message. What ends the socket closes
		// the connection, which ends a write that waits.
		c.conn.SetWriteDeadline(time.Now().Add(c.opts.WriteTimeout))
		err := c.ws.Write(context.Background(), websocket.MessageText, f.data)
		c.conn.SetWriteDeadline(time.Time{})
		if f.pooled {
			putAudioBuffer(f.data)
		}
		if err != nil {
			if c.ctx.Err() == nil {
				c.e.Logger().Info("voice socket write failed", "requestId", c.caller.RequestID, "tenant", c.caller.EngineKey, "err", err)
			}
			c.cancel()
			c.ws.CloseNow()
		}
	}
}

// startWorker counts a goroutine of the socket in workers, unless the socket ended.
func (c *voiceConn) startWorker() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false
	}
	c.workers.Add(1)
	return true
}

// pingClient pings the client, which must answer within the interval, and sets the next ping.
func (c *voiceConn) pingClient() {
	if !c.startWorker() {
		return
	}
	defer c.workers.Done()
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.PingInterval)
	err := c.ws.Ping(ctx)
	cancel()
	if err != nil {
		if c.ctx.Err() == nil {
			c.e.Logger().Info("voice socket ping failed", "requestId", c.caller.RequestID, "tenant", c.caller.EngineKey, "err", err)
			c.cancel()
			c.ws.CloseNow()
		}
		return
	}
	c.mu.Lock()
	if !c.ended {
		c.ping.Reset(c.opts.PingInterval)
	}
	c.mu.Unlock()
}

// checkIdle closes the socket (1000) when neither the client nor a turn did anything for
// IdleTimeout, and otherwise sets the next check.
func (c *voiceConn) checkIdle() {
	wait := c.opts.IdleTimeout
	if !c.busy.Load() {
		since := time.Since(time.Unix(0, c.lastActivity.Load()))
		if since >= c.opts.IdleTimeout {
			c.push(c.ctx, frame{close: websocket.StatusNormalClosure, reason: "idle"}, false)
			return
		}
		wait -= since
	}
	c.mu.Lock()
	if !c.ended {
		c.idle.Reset(wait)
	}
	c.mu.Unlock()
}

// Messages of the server (docs/voice.md).

// transcriptMessage starts a turn: what the user said, and on a conversation's first turn the
// tenant's AI disclosure, whose audio comes first.
func transcriptMessage(turnID, text, disclosure string) []byte {
	b := jsonenc.AppendString([]byte(`{"type":"transcript","text":`), text)
	b = jsonenc.AppendString(append(b, `,"turnId":`...), turnID)
	if disclosure != "" {
		b = jsonenc.AppendString(append(b, `,"disclosure":`...), disclosure)
	}
	return append(b, '}')
}

func speakMessage(delta string) []byte {
	b := jsonenc.AppendString([]byte(`{"type":"speak","delta":`), delta)
	return append(b, '}')
}

// speakPrefix starts every speak message, up to its delta's first character.
const speakPrefix = `{"type":"speak","delta":"`

// maxJoinedSpeak bounds a speak message joined from several.
const maxJoinedSpeak = 16 << 10

// joinSpeak joins two speak messages into one whose delta is a's then b's. Both deltas are
// JSON strings as speakMessage writes them, so their escaped forms join as they are.
func joinSpeak(a, b []byte) []byte {
	return append(a[:len(a)-len(`"}`)], b[len(speakPrefix):]...)
}

// audioBuffers hold audio messages from their encoding to their write, the PCM read from the
// synthesizer, and the client's chunks once decoded: the largest allocations of a voice turn,
// made again for every message.
var audioBuffers = sync.Pool{New: func() any { return new([]byte) }}

func putAudioBuffer(b []byte) {
	b = b[:0]
	audioBuffers.Put(&b)
}

// audioMessage encodes an audio message into a buffer of audioBuffers.
func audioMessage(seq, rate int, pcm []byte) []byte {
	bp := audioBuffers.Get().(*[]byte)
	b := slices.Grow((*bp)[:0], 64+base64.StdEncoding.EncodedLen(len(pcm)))
	b = append(b, `{"type":"audio","seq":`...)
	b = strconv.AppendInt(b, int64(seq), 10)
	b = append(b, `,"sampleRate":`...)
	b = strconv.AppendInt(b, int64(rate), 10)
	b = append(b, `,"chunk":"`...)
	b = base64.StdEncoding.AppendEncode(b, pcm)
	return append(b, `"}`...)
}

func doneMessage(turnID string) []byte {
	b := jsonenc.AppendString([]byte(`{"type":"done","turnId":`), turnID)
	return append(b, '}')
}

func cancelledMessage(turnID string) []byte {
	if turnID == "" {
		return []byte(`{"type":"cancelled"}`)
	}
	b := jsonenc.AppendString([]byte(`{"type":"cancelled","turnId":`), turnID)
	return append(b, '}')
}

// errorMessage reports a failure; turnID is "" when it concerns no turn.
func errorMessage(turnID, code, message string, retryable bool) []byte {
	m := map[string]any{"type": "error", "error": map[string]any{"code": code, "message": message, "retryable": retryable}}
	if turnID != "" {
		m["turnId"] = turnID
	}
	b, _ := json.Marshal(m)
	return b
}

// errClientGone says that the client no longer reads the turn.
var errClientGone = errors.New("voice: the client went away")
