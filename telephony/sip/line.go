package sip

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/diago/media"
	sipmsg "github.com/emiago/sipgo/sip"
	"github.com/pion/rtcp"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/telephony"
)

// frame is one RTP packet's audio: 20 ms at 8 kHz.
const frame = telephony.LineRate / 50

// maxQueued bounds the audio a call holds to send: 5 minutes.
const maxQueued = 300 * telephony.LineRate

// line is a SIP call, the [telephony.Line] of its conversation: the answer's audio goes out
// as RTP, 20 ms a packet, from a queue that barge-in empties; a mark is reported heard once
// the audio before it went out.
type line struct {
	s    *Server
	d    *diago.DialogServerSession
	call *telephony.Call

	// Set by open.
	med      *diago.DialogMedia
	codec    media.Codec // the audio's, PCMU or PCMA
	eventPT  int         // the receive payload type of RFC 4733 events; -1: none
	lastRTP  atomic.Int64
	received rtpCount
	wg       sync.WaitGroup

	mu      sync.Mutex // guards what follows
	queue   []item     // audio and marks not sent yet
	queued  int        // samples in queue
	sent    int64
	reports rtcpReports
}

// item is audio to send, or a mark behind it.
type item struct {
	pcm  []int16
	mark string
}

// rtcpReports is what the caller's RTCP reports said of the engine's audio.
type rtcpReports struct {
	n      int
	lost   int64
	jitter time.Duration
}

// open reads the negotiated media: the audio's codec and the events' payload type, and hooks
// the caller's RTCP reports.
func (l *line) open(ctx context.Context, med *diago.DialogMedia) error {
	l.med = med
	sess := med.MediaSession()
	if sess == nil || med.RTPPacketReader == nil || med.RTPPacketWriter == nil {
		return errors.New("no RTP session")
	}
	l.codec = media.CodecAudioFromSession(sess)
	if !l.codec.Matches(media.CodecAudioUlaw) && !l.codec.Matches(media.CodecAudioAlaw) {
		return fmt.Errorf("the codec negotiated is %s, not G.711", l.codec.Name)
	}
	l.eventPT = -1
	for _, c := range sess.CommonCodecs() {
		if c.Matches(media.CodecTelephoneEvent8000) {
			l.eventPT = int(c.PayloadTypeRecv())
		}
	}
	if rs := med.RTPSession(); rs != nil {
		ssrc := med.RTPPacketWriter.SSRC
		rs.OnReadRTCP(func(pkt rtcp.Packet, _ media.RTPReadStats) { l.report(pkt, ssrc) })
	}
	l.lastRTP.Store(time.Now().UnixNano())
	return nil
}

// keysBy says how the call's keys come, for the log.
func (l *line) keysBy() string {
	if l.eventPT >= 0 {
		return "rfc4733"
	}
	return "info"
}

// run runs the call: the RTP reader and writer beside the conversation, until it ends or the
// caller falls silent for the RTP timeout.
func (l *line) run(ctx context.Context, cancel context.CancelFunc) {
	if ctx.Err() == nil {
		l.wg.Add(3)
		go l.read(ctx)
		go l.write(ctx)
		go l.watch(ctx, cancel)
	}
	l.call.Run(ctx)
	cancel()
	l.med.Close() // ends the reader's read
	l.wg.Wait()
}

// read hands the caller's audio and keys to the call.
func (l *line) read(ctx context.Context) {
	defer l.wg.Done()
	defer l.recover("reading RTP")
	r := l.med.RTPPacketReader
	audioPT := l.codec.PayloadTypeRecv()
	alaw := l.codec.Matches(media.CodecAudioAlaw)
	buf := make([]byte, media.RTPBufSize)
	var (
		pcm    []int16
		events events
		first  uint32
		start  bool
	)
	for ctx.Err() == nil {
		n, err := r.Read(buf)
		if err != nil {
			return
		}
		now := time.Now()
		h := r.PacketHeader
		l.lastRTP.Store(now.UnixNano())
		l.received.add(h.SSRC, h.SequenceNumber)
		switch {
		case int(h.PayloadType) == l.eventPT:
			if key, ok := events.key(h.Marker, h.Timestamp, buf[:n]); ok {
				l.call.Press(key)
			}
		case h.PayloadType == audioPT && n > 0:
			if !start {
				first, start = h.Timestamp, true
			}
			l.call.Arrived(now, time.Duration(h.Timestamp-first)*time.Second/telephony.LineRate)
			if alaw {
				pcm = audio.ALawDecode(pcm[:0], buf[:n])
			} else {
				pcm = audio.MuLawDecode(pcm[:0], buf[:n])
			}
			l.call.Hear(pcm)
		}
	}
}

// write sends the queue's audio as RTP, a packet each 20 ms (the packet writer keeps the
// time), silence when there is none, and reports each mark once the audio before it went out.
func (l *line) write(ctx context.Context) {
	defer l.wg.Done()
	defer l.recover("writing RTP")
	w := l.med.RTPPacketWriter
	alaw := l.codec.Matches(media.CodecAudioAlaw)
	pcm := make([]int16, frame)
	var (
		payload []byte
		marks   []string
	)
	for ctx.Err() == nil {
		marks = l.next(pcm, marks[:0])
		if alaw {
			payload = audio.ALawEncode(payload[:0], pcm)
		} else {
			payload = audio.MuLawEncode(payload[:0], pcm)
		}
		if _, err := w.Write(payload); err != nil {
			return
		}
		for _, m := range marks {
			l.call.Marked(m)
		}
	}
}

// next fills pcm with the next 20 ms of the queue (silence past its end) and appends the marks
// reached to marks.
func (l *line) next(pcm []int16, marks []string) []string {
	clear(pcm)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
	n := 0
	for len(l.queue) > 0 {
		it := &l.queue[0]
		if it.mark != "" {
			marks = append(marks, it.mark)
			l.queue = l.queue[1:]
			continue
		}
		if n == len(pcm) {
			break
		}
		k := copy(pcm[n:], it.pcm)
		n += k
		l.queued -= k
		if it.pcm = it.pcm[k:]; len(it.pcm) == 0 {
			l.queue = l.queue[1:]
		}
	}
	if len(l.queue) == 0 {
		l.queue = nil // the array is not kept growing over a long call
	}
	return marks
}

// watch ends the call when the caller sent no RTP for the timeout.
func (l *line) watch(ctx context.Context, cancel context.CancelFunc) {
	defer l.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if now.Sub(time.Unix(0, l.lastRTP.Load())) > l.s.o.RTPTimeout {
				l.s.e.Logger().Info("sip: the caller sent no RTP; the call ends", "timeout", l.s.o.RTPTimeout)
				cancel()
				return
			}
		}
	}
}

func (l *line) recover(doing string) {
	if v := recover(); v != nil {
		l.s.e.Logger().Error("sip: "+doing+" panicked", "panic", fmt.Sprintf("%T", v))
	}
}

// Play queues the audio behind what was queued before.
func (l *line) Play(ctx context.Context, pcm []int16) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.queued+len(pcm) > maxQueued {
		return errors.New("sip: more audio queued than a call holds")
	}
	l.queue = append(l.queue, item{pcm: append([]int16(nil), pcm...)})
	l.queued += len(pcm)
	return ctx.Err()
}

// Mark queues a mark behind the audio queued.
func (l *line) Mark(ctx context.Context, name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queue = append(l.queue, item{mark: name})
	return nil
}

// Clear drops the audio not sent yet: the next packet is silence. The marks it held are
// reported at once, as Twilio reports those of a clear.
func (l *line) Clear(ctx context.Context) error {
	l.mu.Lock()
	var marks []string
	for _, it := range l.queue {
		if it.mark != "" {
			marks = append(marks, it.mark)
		}
	}
	l.queue, l.queued = nil, 0
	l.mu.Unlock()
	for _, m := range marks {
		l.call.Marked(m)
	}
	return nil
}

// Transfer refers the caller to number (REFER, RFC 3515) at the host that sent the call, and
// waits for the NOTIFY that tells how the transfer ended: a 2xx is done (the caller is with the
// person), anything else an error, and the call goes on.
func (l *line) Transfer(ctx context.Context, number string) error {
	if l.med == nil {
		return errors.New("sip: the call was not answered")
	}
	contact := l.d.RemoteContact()
	if contact == nil {
		return errors.New("sip: the caller gave no Contact to refer")
	}
	to := sipmsg.Uri{Scheme: "sip", User: number, Host: contact.Address.Host, Port: contact.Address.Port}
	outcome := make(chan int, 8)
	ctx, cancel := context.WithTimeout(ctx, l.s.o.TransferTimeout)
	defer cancel()
	err := l.d.ReferOptions(ctx, to, diago.ReferServerOptions{OnNotify: func(code int) {
		select {
		case outcome <- code:
		default:
		}
	}})
	if err != nil {
		return fmt.Errorf("sip: the REFER was refused: %w", err)
	}
	for {
		select {
		case code := <-outcome:
			switch {
			case code < 200:
				continue
			case code < 300:
				return nil
			default:
				return fmt.Errorf("sip: the transfer failed: %d", code)
			}
		case <-l.d.Context().Done():
			return nil // the caller left the engine for the person
		case <-ctx.Done():
			return fmt.Errorf("sip: no outcome of the transfer: %w", ctx.Err())
		}
	}
}

// Hangup ends the call with a BYE.
func (l *line) Hangup(ctx context.Context) error {
	if l.med == nil || l.d.LoadState() != sipmsg.DialogStateConfirmed {
		return nil
	}
	return l.d.Hangup(ctx)
}

// MediaFigures are the call's RTP figures.
func (l *line) MediaFigures() telephony.MediaFigures {
	received, lost := l.received.figures()
	l.mu.Lock()
	defer l.mu.Unlock()
	return telephony.MediaFigures{Received: received, ReceivedLost: lost, Sent: l.sent,
		SentLost: l.reports.lost, SentJitter: l.reports.jitter, Reports: l.reports.n}
}

// report keeps what an RTCP report of the caller says of the engine's stream, ssrc.
func (l *line) report(pkt rtcp.Packet, ssrc uint32) {
	var blocks []rtcp.ReceptionReport
	switch p := pkt.(type) {
	case *rtcp.SenderReport:
		blocks = p.Reports
	case *rtcp.ReceiverReport:
		blocks = p.Reports
	}
	for _, b := range blocks {
		if b.SSRC != ssrc {
			continue
		}
		l.mu.Lock()
		l.reports.n++
		l.reports.lost = int64(b.TotalLost & 0xFFFFFF)
		l.reports.jitter = time.Duration(b.Jitter) * time.Second / telephony.LineRate
		l.mu.Unlock()
	}
}

// rtpCount counts the caller's packets by their sequence numbers (RFC 3550, appendix A.3): the
// packets expected are those from the first to the highest, extended over wraps.
type rtpCount struct {
	mu       sync.Mutex
	ssrc     uint32
	started  bool
	base     uint16
	max      uint16
	cycles   int64
	received int64
}

func (c *rtpCount) add(ssrc uint32, seq uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || ssrc != c.ssrc {
		// A new source (the caller's phone changed streams): counted afresh.
		c.ssrc, c.started, c.base, c.max, c.cycles = ssrc, true, seq, seq, 0
		c.received = 0
	}
	c.received++
	if d := seq - c.max; d > 0 && d < 1<<15 {
		if seq < c.max {
			c.cycles += 1 << 16
		}
		c.max = seq
	}
}

func (c *rtpCount) figures() (received, lost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return 0, 0
	}
	expected := c.cycles + int64(c.max) - int64(c.base) + 1
	return c.received, max(0, expected-c.received)
}

// events reads RFC 4733 telephone events: one key per event, however many packets carry it.
// An event is new when its timestamp changes, or when it starts (marker, not an end) after the
// previous one ended at the same timestamp, as senders that do not advance the clock between
// keys send them.
type events struct {
	started bool
	ts      uint32
	ended   bool
}

// keyNames are the keys of events 0 to 15.
const keyNames = "0123456789*#ABCD"

func (e *events) key(marker bool, ts uint32, payload []byte) (byte, bool) {
	if len(payload) < 4 || payload[0] > 15 {
		return 0, false // not a keypad event (a tone, a flash)
	}
	end := payload[1]&0x80 != 0
	fresh := !e.started || ts != e.ts || e.ended && marker && !end
	if !fresh {
		e.ended = e.ended || end
		return 0, false
	}
	e.started, e.ts, e.ended = true, ts, end
	return keyNames[payload[0]], true
}

// infoKey reads the key of a SIP INFO: application/dtmf-relay ("Signal=5\r\nDuration=160")
// or application/dtmf ("5").
func infoKey(contentType string, body []byte) (byte, bool) {
	if len(body) > 256 {
		return 0, false
	}
	text := strings.TrimSpace(string(body))
	switch contentType {
	case "application/dtmf-relay":
		for l := range strings.Lines(text) {
			k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "signal") {
				text = strings.TrimSpace(v)
				break
			}
		}
	case "application/dtmf":
	default:
		return 0, false
	}
	if len(text) == 1 && strings.IndexByte(keyNames, text[0]) >= 0 {
		return text[0], true
	}
	if text == "10" || text == "11" { // the events' numbers of * and #
		return keyNames[text[1]-'0'+10], true
	}
	return 0, false
}

var _ telephony.MediaLine = (*line)(nil)
