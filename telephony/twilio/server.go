package twilio

import (
	"encoding/xml"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/telephony"
)

// Paths of the routes: the voice webhook a Twilio number calls, and the media stream's
// WebSocket, under which the tenant's key names whose auth token signs its upgrade.
const (
	PathVoice  = "/telephony/twilio/voice"
	PathStream = "/telephony/twilio/stream/"
)

// CodeBadSignature is the problem code of a request whose X-Twilio-Signature is missing or
// wrong (401).
const CodeBadSignature = "invalid_signature"

// DefaultAPIBaseURL is Twilio's REST API.
const DefaultAPIBaseURL = "https://api.twilio.com"

// Options configure a [Server].
type Options struct {
	// PublicURL is the engine's base URL as Twilio reaches it, such as
	// "https://bank.example.com" (required): Twilio signs each request with the URL it asked
	// for, and the stream's URL is made from it (wss:// for https://).
	PublicURL string
	// Directory finds the tenant of the number called (required).
	Directory *telephony.Directory
	// Phone runs the calls (required).
	Phone *telephony.Phone
	// Secret reads a tenant's auth token from the variable its telephony section names
	// (twilio.auth_token_env), such as os.Getenv (required). The library reads no environment.
	Secret func(name string) string
	// APIBaseURL is Twilio's REST API (default DefaultAPIBaseURL); tests stand in for it.
	APIBaseURL string
	// Client calls the REST API; nil: a client with a 10-second time-out.
	Client *http.Client
	// Key signs the stream tokens, at least 32 bytes, the same on every replica (the engine's
	// signing key will do).
	Key []byte
	// Replay spends each stream token once across the replicas; nil: in this process's memory.
	Replay engine.ReplayStore
}

// A Server serves Twilio's voice webhook and media streams for the tenants of its Directory.
type Server struct {
	e *engine.Engine
	o Options
}

// New returns the Twilio transport of e.
func New(e *engine.Engine, o *Options) (*Server, error) {
	if o == nil || o.Directory == nil || o.Phone == nil || o.Secret == nil {
		return nil, errors.New("twilio: Options.Directory, Phone and Secret are required")
	}
	s := &Server{e: e, o: *o}
	u, err := url.Parse(s.o.PublicURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" {
		return nil, errors.New("twilio: Options.PublicURL must be the engine's http(s) base URL, such as https://bank.example.com")
	}
	s.o.PublicURL = strings.TrimSuffix(s.o.PublicURL, "/")
	if len(s.o.Key) < 32 {
		return nil, errors.New("twilio: Options.Key must hold at least 32 bytes")
	}
	if s.o.APIBaseURL == "" {
		s.o.APIBaseURL = DefaultAPIBaseURL
	}
	if s.o.Client == nil {
		s.o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if s.o.Replay == nil {
		s.o.Replay = &engine.MemoryStore{}
	}
	return s, nil
}

// Routes are the webhook and the stream, for the engine's Handler.
func (s *Server) Routes() []engine.Route {
	return []engine.Route{
		{Pattern: PathVoice, Handler: s.e.Route(http.MethodPost, PathVoice, http.HandlerFunc(s.serveVoice))},
		{Pattern: PathStream + "{tenant}", Handler: s.e.Route(http.MethodGet, PathStream+"{tenant}", http.HandlerFunc(s.serveStream))},
	}
}

// streamURL is the stream's URL of tenant, as the TwiML gives it and Twilio signs it.
func (s *Server) streamURL(tenant string) string {
	u := s.o.PublicURL
	if rest, ok := strings.CutPrefix(u, "https://"); ok {
		u = "wss://" + rest
	} else {
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	return u + PathStream + url.PathEscape(tenant)
}

// authToken is the auth token of entry's Twilio account, "" when it has none.
func (s *Server) authToken(entry telephony.Entry) string {
	if entry.Config.Twilio == nil {
		return ""
	}
	return s.o.Secret(entry.Config.Twilio.AuthTokenEnv)
}

// callSid is a Twilio call's SID: "CA" and 32 hexadecimal digits.
var callSid = regexp.MustCompile(`^CA[0-9a-fA-F]{32}$`)

// maxWebhook bounds the webhook's form.
const maxWebhook = 64 << 10

// serveVoice answers Twilio's voice webhook (a call to one of the tenants' numbers) with TwiML
// that connects the call to a bidirectional media stream (<Connect><Stream>,
// https://www.twilio.com/docs/voice/twiml/stream), carrying a single-use token bound to the
// call as a <Parameter>.
func (s *Server) serveVoice(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		engine.WriteProblem(w, engine.NewProblem(http.StatusUnsupportedMediaType, engine.CodeUnsupportedMediaType, "the webhook's body must be application/x-www-form-urlencoded"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxWebhook)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			engine.WriteProblem(w, engine.NewProblem(http.StatusRequestEntityTooLarge, engine.CodePayloadTooLarge, "the webhook's body is too large"))
			return
		}
		engine.WriteProblem(w, engine.NewProblem(http.StatusBadRequest, engine.CodeInvalidRequest, "the webhook's body is not a form"))
		return
	}
	form := r.PostForm
	to, from, sid := form.Get("To"), form.Get("From"), form.Get("CallSid")
	entry, ok := s.o.Directory.Lookup(to)
	token := ""
	if ok {
		token = s.authToken(entry)
	}
	// Twilio signs the URL it was configured with: the public URL, this path and its query.
	if !ok || !validSignature(token, r.Header.Get("X-Twilio-Signature"), s.o.PublicURL+r.URL.RequestURI(), form) {
		s.e.Logger().Warn("twilio: a voice webhook was refused: no such number, or a bad signature", "known", ok)
		engine.WriteProblem(w, engine.NewProblem(http.StatusUnauthorized, CodeBadSignature, "the request's X-Twilio-Signature is missing or wrong"))
		return
	}
	if acct := entry.Config.Twilio.AccountSID; acct != "" && form.Get("AccountSid") != acct {
		engine.WriteProblem(w, engine.NewProblem(http.StatusForbidden, CodeBadSignature, "the call belongs to another Twilio account"))
		return
	}
	if !callSid.MatchString(sid) {
		engine.WriteProblem(w, engine.InvalidField("CallSid", "must be a call's SID"))
		return
	}
	if !telephony.ValidNumber(from) {
		from = "anonymous" // a withheld or malformed number: bounded together
	}
	s.o.Phone.Prepare(entry) // the greeting, while Twilio opens the stream
	tok := sealToken(s.o.Key, &callToken{Tenant: entry.Tenant.Key, CallSid: sid, From: from, To: to,
		Expires: time.Now().Add(tokenLifetime).Unix()})
	doc := twiml(func(b *strings.Builder) {
		b.WriteString(`<Connect><Stream url="`)
		xml.EscapeText(b, []byte(s.streamURL(entry.Tenant.Key)))
		b.WriteString(`"><Parameter name="token" value="`)
		xml.EscapeText(b, []byte(tok))
		b.WriteString(`"/></Stream></Connect>`)
	})
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte(doc))
}
