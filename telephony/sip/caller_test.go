package sip_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/diago/media"
	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/testkit"
)

// The caller of these tests is diago itself, as a softphone on loopback: it invites the
// engine with an offer of PCMU, PCMA and RFC 4733 events, plays its speech as RTP in real
// time, types keys as RFC 4733 events, and hears the engine's audio as a phone would. Its own
// server plays the person a REFER sends the caller to: it answers the INVITE the caller makes
// to the Refer-To URI, which names the caller's host (the engine refers to the host that sent
// the call, as an SBC or a PBX would be).

// phoneUA is the caller's SIP user agent.
type phoneUA struct {
	dg      *diago.Diago
	ua      *sipgo.UserAgent
	port    int
	persons chan string // the users the person's line was called for
}

// newPhoneUA starts a caller's user agent on a free loopback port, offering codecs.
func newPhoneUA(t testing.TB, codecs ...media.Codec) *phoneUA {
	t.Helper()
	ua, err := sipgo.NewUA(sipgo.WithUserAgent("caller"))
	if err != nil {
		t.Fatal(err)
	}
	p := &phoneUA{ua: ua, port: freeUDP(t), persons: make(chan string, 4)}
	opts := []diago.DiagoOption{diago.WithTransport(diago.Transport{Transport: "udp", BindHost: "127.0.0.1", BindPort: p.port}),
		diago.WithLogger(quietLog)}
	if len(codecs) > 0 {
		opts = append(opts, diago.WithMediaConfig(diago.MediaConfig{Codecs: codecs}))
	}
	p.dg = diago.NewDiago(ua, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	var served sync.WaitGroup
	if err := p.dg.ServeBackground(ctx, func(d *diago.DialogServerSession) {
		served.Add(1)
		defer served.Done()
		// The person: answers, and stays until hung up.
		p.persons <- d.ToUser()
		d.Trying()
		if med, err := d.Answer(diago.AnswerOptions{}); err == nil {
			defer med.Close()
			select {
			case <-d.Context().Done():
			case <-ctx.Done():
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		served.Wait()
		ua.Close()
	})
	return p
}

func freeUDP(t testing.TB) int {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// phoneCall is one call of the caller.
type phoneCall struct {
	t      testing.TB
	d      *diago.DialogClientSession
	med    *diago.DialogMedia
	keysW  *diago.DTMFWriter
	codec  media.Codec
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	outgoing []int16 // the caller's speech still to send
	heard    int     // samples of speech heard
	lastAt   time.Time
	referred []string
}

// call invites to at the engine's addr from from; the error is the engine's refusal
// (a sipgo.ErrDialogResponse) or the network's.
func (p *phoneUA) call(t testing.TB, addr, to, from string) (*phoneCall, error) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var c *phoneCall
	var med *diago.DialogMedia
	var err error
	for attempt := 0; ; attempt++ {
		d, err := p.dg.NewDialog(sipmsg.Uri{User: to, Host: host, Port: n}, diago.NewDialogOptions{Transport: "udp"})
		if err != nil {
			t.Fatal(err)
		}
		c = &phoneCall{t: t, d: d}
		opts := diago.InviteClientOptions{OnRefer: c.refer}
		opts.WithCaller("", from, "127.0.0.1")
		med, err = d.Invite(ctx, opts)
		if err == nil {
			break
		}
		d.Close()
		// sipgo reports its listener ready before it pools the listener's socket, and a request
		// sent in between binds the port again: a race of a user agent just started.
		inUse := errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
		if !inUse || attempt == 10 {
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
	d := c.d
	if err = d.Ack(ctx); err != nil {
		d.Close()
		t.Fatal(err)
	}
	c.med = med
	c.codec = media.CodecAudioFromSession(med.MediaSession())
	if c.keysW, err = med.AudioWriterDTMF(); err != nil {
		t.Fatal(err)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(2)
	go c.listen()
	go c.speak()
	t.Cleanup(c.hangUp)
	return c, nil
}

// refer is the caller's phone following a REFER: it calls the Refer-To URI (the person).
func (c *phoneCall) refer(referDialog *diago.DialogClientSession) error {
	c.mu.Lock()
	c.referred = append(c.referred, referDialog.InviteRequest.Recipient.User)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	med, err := referDialog.Invite(ctx, diago.InviteClientOptions{})
	if err != nil {
		return err
	}
	defer med.Close()
	if err := referDialog.Ack(ctx); err != nil {
		return err
	}
	return referDialog.Hangup(ctx)
}

// listen hears the engine's audio: speech is what is louder than a quiet line.
func (c *phoneCall) listen() {
	defer c.wg.Done()
	r, err := c.med.AudioReader()
	if err != nil {
		return
	}
	buf := make([]byte, media.RTPBufSize)
	var pcm []int16
	for {
		n, err := r.Read(buf)
		if err != nil {
			return
		}
		if c.med.RTPPacketReader.PacketHeader.PayloadType != c.codec.PayloadType {
			continue
		}
		if c.codec.Matches(media.CodecAudioAlaw) {
			pcm = audio.ALawDecode(pcm[:0], buf[:n])
		} else {
			pcm = audio.MuLawDecode(pcm[:0], buf[:n])
		}
		if testkit.Loudest(pcm) > 200 {
			c.mu.Lock()
			c.heard += len(pcm)
			c.lastAt = time.Now()
			c.mu.Unlock()
		}
	}
}

// speak sends the caller's next 20 ms every 20 ms: its speech, or silence.
func (c *phoneCall) speak() {
	defer c.wg.Done()
	out := make([]int16, 160)
	var payload []byte
	for c.ctx.Err() == nil {
		c.mu.Lock()
		clear(out)
		k := copy(out, c.outgoing)
		c.outgoing = c.outgoing[k:]
		c.mu.Unlock()
		if c.codec.Matches(media.CodecAudioAlaw) {
			payload = audio.ALawEncode(payload[:0], out)
		} else {
			payload = audio.MuLawEncode(payload[:0], out)
		}
		if _, err := c.keysW.Write(payload); err != nil { // paced by the packet writer's clock
			return
		}
	}
}

// say queues speech (16 kHz) to be sent, resampled to the line's 8 kHz.
func (c *phoneCall) say(pcm16k []int16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.outgoing = append(c.outgoing, audio.Resample(pcm16k, 16000, 8000)...)
}

// keys types keys as RFC 4733 events, between the audio's packets.
func (c *phoneCall) keys(s string) {
	for _, k := range s {
		if err := c.keysW.WriteDTMF(k); err != nil {
			c.t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond)
	}
}

// heardSeconds is how much speech the caller heard.
func (c *phoneCall) heardSeconds() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(c.heard) / 8000
}

// waitPlaying waits until the engine's speech plays, or fails after limit.
func (c *phoneCall) waitPlaying(limit time.Duration) {
	c.t.Helper()
	testkit.Poll(c.t, limit, "no speech played", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.outgoing) == 0 && time.Since(c.lastAt) < 100*time.Millisecond
	})
}

// waitAnswer waits until the caller sent all its speech, then heard speech after it (or
// after since, when not zero) to its end: quiet for quiet. It fails after limit.
func (c *phoneCall) waitAnswer(since time.Time, quiet, limit time.Duration) {
	c.t.Helper()
	sent := since
	testkit.Poll(c.t, limit, "no answer came, or it did not end", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if sent.IsZero() && len(c.outgoing) == 0 {
			sent = time.Now()
		}
		return !sent.IsZero() && c.lastAt.After(sent) && time.Since(c.lastAt) > quiet
	})
}

// waitEnded waits until the engine ends the call (its BYE), or fails after limit.
func (c *phoneCall) waitEnded(limit time.Duration) {
	c.t.Helper()
	select {
	case <-c.d.Context().Done():
	case <-time.After(limit):
		c.t.Fatal("the engine did not end the call")
	}
}

// hangUp sends BYE, unless the call ended, and stops the phone.
func (c *phoneCall) hangUp() {
	if c.d.LoadState() == sipmsg.DialogStateConfirmed {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.d.Hangup(ctx)
		cancel()
	}
	c.cancel()
	c.med.Close()
	c.wg.Wait()
	c.d.Close()
}

// refusal is the status the engine refused an INVITE with, 0 for none.
func refusal(err error) int {
	var res sipgo.ErrDialogResponse
	if errors.As(err, &res) {
		return res.Res.StatusCode
	}
	var resp *sipgo.ErrDialogResponse
	if errors.As(err, &resp) {
		return resp.Res.StatusCode
	}
	return 0
}
