package demobank

import (
	"container/heap"
	"net/http"
	"time"
)

// What the bank keeps of its users, and what it may forget to make room.
//
// The bank holds at most Options.MaxUsers users. Each is in one of three files:
//
//   - enrolled: the user has a device. Never forgotten.
//   - guarded: the user holds state that protects them from someone else: a pending code
//     (until it expires), the codes sent in the last 10 minutes (the bound on codes), wrong codes
//     given in the last 15 minutes (the lock). Never forgotten while the guard lasts; it lapses
//     at a time known when it is set, u.guardedUntil, and the user is then one of the others.
//   - the others hold nothing but seeded accounts. They are the only users the bank forgets,
//     least recently seen first; such a token starts again from the seeded accounts, which
//     protects nobody.
//
// When the bank is full of enrolled and guarded users, a new user is refused (503 bank_full)
// with Retry-After saying when the first guard lapses: another user's traffic never buys
// room with someone's lock or code. A guard is made only by a code sent, and codes are bounded
// per user and per client address (address.go), so that one address cannot fill the bank.

// user returns the user of key, seeding a new one, and forgetting the least recently seen
// user that neither is enrolled nor guarded when the bank is full. When the bank is full of
// users it may not forget, user returns nil and how long until a guard lapses (0 when none
// will). b.mu must be held.
func (b *Bank) user(key userKey, now time.Time) (*user, time.Duration) {
	if u, ok := b.users[key]; ok {
		if u.elem != nil {
			b.lru.MoveToFront(u.elem)
		}
		return u, 0
	}
	for len(b.users) >= b.maxUsers {
		// A user whose guard lapsed is one of the others again, and not seen since it was set.
		for len(b.guarded) > 0 && !b.guarded[0].guardedUntil.After(now) {
			u := heap.Pop(&b.guarded).(*user)
			u.elem = b.lru.PushBack(u)
		}
		oldest := b.lru.Back()
		if oldest == nil {
			if len(b.guarded) > 0 {
				return nil, b.guarded[0].guardedUntil.Sub(now)
			}
			return nil, 0
		}
		delete(b.users, oldest.Value.(*user).key)
		b.lru.Remove(oldest)
	}
	u := newUser(key, now)
	u.elem = b.lru.PushFront(u)
	b.users[key] = u
	return u, 0
}

// file puts u in the file its state calls for: enrolled, guarded until its guard lapses, or
// one of the users the bank may forget. It runs after every change of u. b.mu must be held.
func (b *Bank) file(u *user, now time.Time) {
	until := u.guardEnds(now)
	switch {
	case len(u.devices) > 0:
		b.unlist(u)
		b.unguard(u)
	case until.After(now):
		b.unlist(u)
		u.guardedUntil = until
		if u.guard < 0 {
			heap.Push(&b.guarded, u)
		} else {
			heap.Fix(&b.guarded, u.guard)
		}
	default:
		b.unguard(u)
		if u.elem == nil {
			u.elem = b.lru.PushFront(u)
		}
	}
}

func (b *Bank) unlist(u *user) {
	if u.elem != nil {
		b.lru.Remove(u.elem)
		u.elem = nil
	}
}

func (b *Bank) unguard(u *user) {
	if u.guard >= 0 {
		heap.Remove(&b.guarded, u.guard)
	}
}

// guardEnds returns when the state that protects u lapses: its pending code, the codes sent in
// the last codeLifetime, its wrong codes. It is not after now when nothing protects u.
func (u *user) guardEnds(now time.Time) time.Time {
	until := now
	later := func(t time.Time) {
		if t.After(until) {
			until = t
		}
	}
	if u.code != nil {
		later(u.code.expires)
	}
	if n := len(u.codesSent); n > 0 {
		later(u.codesSent[n-1].Add(codeLifetime))
	}
	if u.wrongCodes > 0 {
		later(u.lastWrong.Add(codeLockout))
	}
	return until
}

// withUser runs f with the user of key under the bank's lock, then files the user again, or
// answers 503 when the bank cannot take another user.
func (b *Bank) withUser(w http.ResponseWriter, key userKey, f func(u *user)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	u, wait := b.user(key, now)
	if u == nil {
		bankFull(wait).write(w)
		return false
	}
	f(u)
	b.file(u, now)
	return true
}

// bankFull is the refusal of a new user by a bank full of users it may not forget; wait is
// how long until a guard lapses, 0 when none will.
func bankFull(wait time.Duration) *problem {
	return &problem{http.StatusServiceUnavailable, "bank_full", "The bank cannot take new customers right now. Try again later.", wait}
}

// guardedHeap is a heap of guarded users, the one whose guard lapses first on top.
type guardedHeap []*user

func (h guardedHeap) Len() int           { return len(h) }
func (h guardedHeap) Less(i, j int) bool { return h[i].guardedUntil.Before(h[j].guardedUntil) }
func (h guardedHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].guard, h[j].guard = i, j
}
func (h *guardedHeap) Push(x any) {
	u := x.(*user)
	u.guard = len(*h)
	*h = append(*h, u)
}
func (h *guardedHeap) Pop() any {
	old := *h
	u := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	u.guard = -1
	return u
}
