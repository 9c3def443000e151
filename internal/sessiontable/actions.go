package sessiontable

import "time"

// Actions holds what a MemoryStore keeps of confirmed actions: each id's claim by one owner
// while its action runs, until the claim's lease ends, and then its result until the record
// expires. The zero value is ready to use; it is not safe for concurrent use.
type Actions struct {
	l Leases[action]
}

type action struct {
	owner  string // the claim's owner while the action runs
	result []byte // nil while the action runs
}

// Begin claims id for owner until leaseUntil unless it is claimed or finished: it returns the
// result of a finished action, or held true while another claim holds id.
func (a *Actions) Begin(id, owner string, leaseUntil, now time.Time) (result []byte, held bool) {
	if r, fresh := a.l.Add(id, action{owner: owner}, leaseUntil, now); !fresh {
		return r.result, r.result == nil
	}
	return nil, false
}

// Finish records result for id until expiry, in place of owner's claim, and reports false,
// recording nothing, when another owner's claim or a result holds id.
func (a *Actions) Finish(id, owner string, result []byte, expiry, now time.Time) bool {
	if r, ok := a.l.Get(id, now); ok && (r.result != nil || r.owner != owner) {
		return false
	}
	a.l.Put(id, action{result: append([]byte{}, result...)}, expiry, now)
	return true
}

// Abandon forgets owner's claim of id; another owner's claim, and a result, stay.
func (a *Actions) Abandon(id, owner string, now time.Time) {
	if r, ok := a.l.Get(id, now); ok && r.result == nil && r.owner == owner {
		a.l.Delete(id)
	}
}
