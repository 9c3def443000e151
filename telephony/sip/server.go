package sip

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emiago/diago"
	"github.com/emiago/diago/media"
	"github.com/emiago/sipgo"
	sipmsg "github.com/emiago/sipgo/sip"

	"github.com/convengine/engine"
	"github.com/convengine/engine/telephony"
)

// Options configure a [Server].
type Options struct {
	// Addr is where the server answers INVITEs, over UDP and TCP, such as "0.0.0.0:5060"
	// (required). Port 0 picks a port free for both.
	Addr string
	// ExternalIP is the address the trunks reach the engine at, written in the Contact header
	// and the SDP, when it is not Addr's host (behind NAT); default Addr's host, or the first
	// interface's address when Addr's host is unspecified.
	ExternalIP string
	// RTPPorts is the range of UDP ports the calls' RTP and RTCP use, two per call; the zero
	// value lets the system pick.
	RTPPorts PortRange
	// Directory finds the tenant of the number dialled (required).
	Directory *telephony.Directory
	// Phone runs the calls (required); it may serve other transports too.
	Phone *telephony.Phone
	// RTPTimeout ends a call whose caller sent no RTP for that long (default 30s): a caller
	// gone without a BYE.
	RTPTimeout time.Duration
	// TransferTimeout is how long a REFER may take to report its outcome (default 60s).
	TransferTimeout time.Duration
}

// PortRange is a range of UDP ports, First to Last.
type PortRange struct{ First, Last int }

// ParsePortRange reads a range such as "10000-10100".
func ParsePortRange(s string) (PortRange, error) {
	first, last, ok := strings.Cut(s, "-")
	a, err1 := strconv.Atoi(first)
	b, err2 := strconv.Atoi(last)
	if !ok || err1 != nil || err2 != nil || a < 1024 || b > 65535 || b-a < 3 {
		return PortRange{}, fmt.Errorf("sip: %q is not a range of ports such as 10000-10100 (from 1024 to 65535, at least 4 ports)", s)
	}
	return PortRange{a, b}, nil
}

// A Server answers SIP calls to the tenants' numbers. It is safe for concurrent use.
type Server struct {
	e    *engine.Engine
	o    Options
	addr string // host:port, the port chosen
	ua   *sipgo.UserAgent
	dg   *diago.Diago

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	calls  sync.WaitGroup

	mu     sync.Mutex
	lines  map[string]*line // by dialog id, for SIP INFO keys
	closed bool
}

// quiet drops what diago and sipgo would log: their lines hold SIP messages (an INFO's keys
// among them) and one per packet of a flood.
var quiet = slog.New(slog.DiscardHandler)

// global sets diago's settings of the process once.
var global sync.Once

// New returns the SIP transport of e; [Server.Start] starts it.
func New(e *engine.Engine, o *Options) (*Server, error) {
	if o == nil || o.Directory == nil || o.Phone == nil || o.Addr == "" {
		return nil, errors.New("sip: Options.Addr, Directory and Phone are required")
	}
	s := &Server{e: e, o: *o, lines: map[string]*line{}}
	if s.o.RTPTimeout <= 0 {
		s.o.RTPTimeout = 30 * time.Second
	}
	if s.o.TransferTimeout <= 0 {
		s.o.TransferTimeout = 60 * time.Second
	}
	host, port, err := net.SplitHostPort(s.o.Addr)
	if err != nil {
		return nil, fmt.Errorf("sip: Options.Addr %q: %w", s.o.Addr, err)
	}
	bind, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("sip: Options.Addr %q: the host must be an IP address", s.o.Addr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return nil, fmt.Errorf("sip: Options.Addr %q: no port", s.o.Addr)
	}
	if p == 0 {
		if p, err = freePort(bind); err != nil {
			return nil, err
		}
	}
	s.addr = net.JoinHostPort(host, strconv.Itoa(p))
	if r := s.o.RTPPorts; r != (PortRange{}) && (r.First < 1024 || r.Last > 65535 || r.Last-r.First < 3) {
		return nil, errors.New("sip: Options.RTPPorts must hold at least 4 ports from 1024 to 65535")
	}
	var external net.IP
	if s.o.ExternalIP != "" {
		if external = net.ParseIP(s.o.ExternalIP); external == nil {
			return nil, fmt.Errorf("sip: Options.ExternalIP %q is not an IP address", s.o.ExternalIP)
		}
	}
	global.Do(func() {
		sipmsg.SetDefaultLogger(quiet)
		media.SetDefaultLogger(quiet)
	})
	media.RTPPortStart, media.RTPPortEnd = s.o.RTPPorts.First, s.o.RTPPorts.Last
	s.ua, err = sipgo.NewUA(sipgo.WithUserAgent("engine"),
		sipgo.WithUserAgentTransportLayerOptions(sipmsg.WithTransportLayerLogger(quiet)),
		sipgo.WithUserAgentTransactionLayerOptions(sipmsg.WithTransactionLayerLogger(quiet)))
	if err != nil {
		return nil, fmt.Errorf("sip: %w", err)
	}
	opts := []diago.DiagoOption{diago.WithLogger(quiet), diago.WithServerRequestMiddleware(s.guard),
		diago.WithMediaConfig(diago.MediaConfig{Codecs: codecs})}
	for _, network := range []string{"udp", "tcp"} {
		t := diago.Transport{Transport: network, BindHost: host, BindPort: p}
		if external != nil {
			t.ExternalHost, t.MediaExternalIP = external.String(), external
		}
		opts = append(opts, diago.WithTransport(t))
	}
	s.dg = diago.NewDiago(s.ua, opts...)
	return s, nil
}

// codecs are what the engine answers with, in the offer's order: G.711 and RFC 4733 events.
var codecs = []media.Codec{media.CodecAudioUlaw, media.CodecAudioAlaw, media.CodecTelephoneEvent8000}

// freePort finds a port free for both UDP and TCP on bind.
func freePort(bind netip.Addr) (int, error) {
	for range 20 {
		u, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(bind, 0)))
		if err != nil {
			return 0, fmt.Errorf("sip: %w", err)
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		t, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(bind, uint16(port))))
		u.Close()
		if err == nil {
			t.Close()
			return port, nil
		}
	}
	return 0, errors.New("sip: no port free for both UDP and TCP")
}

// Addr is the address the server answers on, its port chosen.
func (s *Server) Addr() string { return s.addr }

// Start listens, and returns once the server answers on UDP and TCP. It serves until Close.
func (s *Server) Start(ctx context.Context) error {
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := s.dg.ServeBackground(s.ctx, s.serve); err != nil {
		s.cancel()
		s.ua.Close()
		return fmt.Errorf("sip: listening on %s: %w", s.addr, err)
	}
	return nil
}

// Close stops listening, ends the calls still up (a BYE each: the engine's Shutdown has said
// goodbye on them before, when it runs first) and waits until they have ended.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	s.calls.Wait()
	return s.ua.Close()
}

// guard wraps diago's handling of each request: a panic on a hostile message is answered 500
// and logged, never the end of the process; SIP INFO keys (application/dtmf-relay) go to
// their call.
func (s *Server) guard(next sipgo.RequestHandler) sipgo.RequestHandler {
	return func(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
		defer func() {
			if v := recover(); v != nil {
				s.e.Logger().Error("sip: handling a request panicked", "method", req.Method.String(),
					"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
				tx.Respond(sipmsg.NewResponseFromRequest(req, sipmsg.StatusInternalServerError, "Server Internal Error", nil))
			}
		}()
		switch {
		case req.Method == sipmsg.INFO:
			s.info(req, tx)
			return
		case req.Method == sipmsg.INVITE && req.Contact() == nil:
			// diago drops such an INVITE unanswered: the caller is told.
			tx.Respond(sipmsg.NewResponseFromRequest(req, sipmsg.StatusBadRequest, "Missing Contact", nil))
			return
		}
		next(req, tx)
	}
}

// info takes the keys a SIP INFO carries (application/dtmf-relay, or application/dtmf) to
// its call.
func (s *Server) info(req *sipmsg.Request, tx sipmsg.ServerTransaction) {
	id, err := sipmsg.DialogIDFromRequestUAS(req)
	s.mu.Lock()
	l := s.lines[id]
	s.mu.Unlock()
	if err != nil || l == nil {
		tx.Respond(sipmsg.NewResponseFromRequest(req, sipmsg.StatusCallTransactionDoesNotExists, "Call/Transaction Does Not Exist", nil))
		return
	}
	ct := ""
	if h := req.ContentType(); h != nil {
		ct = strings.ToLower(strings.TrimSpace(strings.Split(h.Value(), ";")[0]))
	}
	key, ok := infoKey(ct, req.Body())
	if !ok {
		tx.Respond(sipmsg.NewResponseFromRequest(req, sipmsg.StatusUnsupportedMediaType, "Unsupported Media Type", nil))
		return
	}
	l.call.Press(key)
	tx.Respond(sipmsg.NewResponseFromRequest(req, sipmsg.StatusOK, "OK", nil))
}

// serve answers one INVITE: it finds the tenant, checks the caller's trunk and offer, admits
// the call, answers it and runs its conversation until it ends.
func (s *Server) serve(d *diago.DialogServerSession) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		d.Respond(sipmsg.StatusServiceUnavailable, "Service Unavailable", nil, sipmsg.NewHeader("Retry-After", "5"))
		return
	}
	s.calls.Add(1)
	s.mu.Unlock()
	defer s.calls.Done()
	req := d.InviteRequest
	log := s.e.Logger()
	refuse := func(code int, reason, why string, headers ...sipmsg.Header) {
		log.Info("sip: a call was refused", "status", code, "why", why)
		d.Respond(code, reason, nil, headers...)
	}
	entry, ok := s.lookup(req)
	if !ok {
		refuse(sipmsg.StatusNotFound, "Not Found", "no tenant answers the number dialled")
		return
	}
	src, err := netip.ParseAddrPort(req.Source())
	if err != nil || !entry.Config.SIP.Allows(src.Addr()) {
		refuse(sipmsg.StatusForbidden, "Forbidden", "the call did not come from one of the tenant's trunks")
		return
	}
	if ct := req.ContentType(); ct == nil || !strings.EqualFold(strings.TrimSpace(strings.Split(ct.Value(), ";")[0]), "application/sdp") {
		refuse(sipmsg.StatusNotAcceptableHere, "Not Acceptable Here", "the INVITE holds no SDP offer",
			sipmsg.NewHeader("Warning", `399 engine "an SDP offer of G.711 is required"`))
		return
	}
	req.SetBody(terminated(req.Body()))
	if code, why := checkOffer(req.Body()); code != 0 {
		reason := "Bad Request"
		if code == sipmsg.StatusNotAcceptableHere {
			reason = "Not Acceptable Here"
		}
		refuse(code, reason, why, sipmsg.NewHeader("Warning", `305 engine "`+why+`"`))
		return
	}
	info := telephony.CallInfo{ID: callID(), From: caller(req), To: entry.Config.Numbers[0]}
	if n, ok := dialled(req); ok {
		info.To = n
	}
	d.Trying()
	s.o.Phone.Prepare(entry) // the greeting, while the call is answered
	l := &line{s: s, d: d}
	call := s.o.Phone.Answer(s.ctx, entry, info, l)
	if p := call.Refused(); p != nil {
		log.Info("sip: a call was refused", "requestId", info.ID, "tenant", entry.Tenant.Key, "code", p.Code)
		if p.Status == http.StatusTooManyRequests {
			d.Respond(sipmsg.StatusBusyHere, "Busy Here", nil)
		} else {
			d.Respond(sipmsg.StatusServiceUnavailable, "Service Unavailable", nil, sipmsg.NewHeader("Retry-After", "5"))
		}
		return
	}
	l.call = call
	id := d.ID // keys in INFO may come as soon as the 200 is sent
	s.mu.Lock()
	s.lines[id] = l
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lines, id)
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	stop := context.AfterFunc(d.Context(), cancel) // the caller's BYE, or the dialog's end
	defer stop()
	med, err := d.Answer(diago.AnswerOptions{Codecs: codecs})
	if err != nil {
		// Answer refused the offer, or no ACK came: the call was not taken.
		log.Info("sip: answering a call failed", "requestId", info.ID, "tenant", entry.Tenant.Key, "err", err)
		if d.LoadState() < sipmsg.DialogStateEstablished {
			d.Respond(sipmsg.StatusNotAcceptableHere, "Not Acceptable Here", nil)
		}
		cancel()
		call.Run(ctx) // releases its place; the caller is gone
		return
	}
	defer med.Close()
	if err := l.open(ctx, med); err != nil {
		log.Warn("sip: the call's media did not open", "requestId", info.ID, "tenant", entry.Tenant.Key, "err", err)
		cancel()
	}
	log.Info("sip call", "requestId", info.ID, "tenant", entry.Tenant.Key, "codec", l.codec.Name,
		"transport", strings.ToLower(req.Transport()), "keys", l.keysBy())
	l.run(ctx, cancel)
	// The conversation ended: hung up, handed over, or the server closing. A call still up
	// is ended here, with a BYE, within the wait.
	if d.LoadState() == sipmsg.DialogStateConfirmed {
		hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer hcancel()
		d.Hangup(hctx)
	}
}

// lookup finds the tenant of the number dialled: the request URI's user, else the To header's.
func (s *Server) lookup(req *sipmsg.Request) (telephony.Entry, bool) {
	for _, user := range users(req) {
		if n, ok := number(user); ok {
			if e, ok := s.o.Directory.Lookup(n); ok {
				return e, true
			}
		}
	}
	return telephony.Entry{}, false
}

// dialled is the number dialled, as lookup read it.
func dialled(req *sipmsg.Request) (string, bool) {
	for _, user := range users(req) {
		if n, ok := number(user); ok {
			return n, true
		}
	}
	return "", false
}

func users(req *sipmsg.Request) []string {
	out := []string{req.Recipient.User}
	if to := req.To(); to != nil {
		out = append(out, to.Address.User)
	}
	return out
}

// number reads a SIP user part as an E.164 number: "+15550100", "15550100", "0015550100",
// with visual separators dropped.
func number(user string) (string, bool) {
	if user == "" || len(user) > 40 {
		return "", false
	}
	var b strings.Builder
	for i := range len(user) {
		switch c := user[i]; {
		case c >= '0' && c <= '9', c == '+' && i == 0:
			b.WriteByte(c)
		case c == '-' || c == '.' || c == '(' || c == ')' || c == ' ':
		default:
			return "", false // ;npdi, letters: not a number
		}
	}
	n := b.String()
	switch {
	case strings.HasPrefix(n, "+"):
	case strings.HasPrefix(n, "00"):
		n = "+" + n[2:]
	default:
		n = "+" + n
	}
	return n, telephony.ValidNumber(n)
}

// caller is the calling number: P-Asserted-Identity's (the trunk's word), else From's; a
// withheld or malformed number is "anonymous".
func caller(req *sipmsg.Request) string {
	if h := req.GetHeader("P-Asserted-Identity"); h != nil {
		var u sipmsg.Uri
		params := sipmsg.NewParams()
		if _, err := sipmsg.ParseAddressValue(h.Value(), &u, &params); err == nil {
			if n, ok := number(u.User); ok {
				return n
			}
		}
	}
	if from := req.From(); from != nil {
		if n, ok := number(from.Address.User); ok {
			return n
		}
	}
	return "anonymous"
}

// callID names a call in the engine's logs and to the tenant's backend. The SIP Call-ID is
// the caller's choice, so it is not used: a made one cannot collide with another call's.
func callID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "sip-" + hex.EncodeToString(b)
}
