package demobank

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// DefaultMaxCodesPerAddress is how many enrolment codes a [Bank] sends for one client address
// in 10 minutes when [Options] name no bound.
const DefaultMaxCodesPerAddress = 20

// RemoteAddress is the default [Options.ClientAddress]: the host of r.RemoteAddr, an IPv6
// address cut to its /64, which one subscriber usually holds whole. Behind a proxy,
// r.RemoteAddr is the proxy's; a bank there must name the client address its trusted proxy
// gives instead.
func RemoteAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// senders bound the codes sent for each client address, so that one client, with as many
// tokens as it likes, can neither bomb many phones nor fill the bank with guarded users.
// It remembers an address for codeLifetime after its last code: the addresses remembered are
// at most the codes sent in the last 10 minutes, themselves at most five per user kept.
type senders struct {
	max    int
	byAddr map[string]*sender
	order  list.List // of *sender, by their last code; front: the oldest
}

// sender is a client address and when codes were sent for it in the last codeLifetime, oldest
// first.
type sender struct {
	addr string
	sent []time.Time
	elem *list.Element
}

// wait returns how long addr must wait before the bank sends another code for it; 0 when it
// may now. s's bank's lock is held.
func (s *senders) wait(addr string, now time.Time) time.Duration {
	for e := s.order.Front(); e != nil; e = s.order.Front() {
		c := e.Value.(*sender)
		if now.Sub(c.sent[len(c.sent)-1]) < codeLifetime {
			break
		}
		delete(s.byAddr, c.addr)
		s.order.Remove(e)
	}
	c := s.byAddr[addr]
	if c == nil {
		return 0
	}
	for now.Sub(c.sent[0]) >= codeLifetime {
		c.sent = c.sent[1:]
	}
	if len(c.sent) < s.max {
		return 0
	}
	return c.sent[0].Add(codeLifetime).Sub(now)
}

// record notes a code sent for addr. s's bank's lock is held.
func (s *senders) record(addr string, now time.Time) {
	c := s.byAddr[addr]
	if c == nil {
		c = &sender{addr: addr}
		s.byAddr[addr] = c
		c.elem = s.order.PushBack(c)
	} else {
		s.order.MoveToBack(c.elem)
	}
	c.sent = append(c.sent, now)
}
