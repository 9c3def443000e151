package demobank_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine/examples/demobank"
)

// floodBank is a bank that requires proofs, driven in process so that each request names its
// client address, with its clock and every code it sent.
type floodBank struct {
	bank *demobank.Bank
	mu   sync.Mutex
	now  time.Time
	sent map[string][]string // codes by user label, in the order sent
}

func newFloodBank(maxUsers int) *floodBank {
	fb := &floodBank{now: clock, sent: map[string][]string{}}
	fb.bank = demobank.New(&demobank.Options{RequireDeviceProof: true, MaxUsers: maxUsers,
		Now: func() time.Time { fb.mu.Lock(); defer fb.mu.Unlock(); return fb.now },
		SendCode: func(user, code string) {
			fb.mu.Lock()
			fb.sent[user] = append(fb.sent[user], code)
			fb.mu.Unlock()
		}})
	return fb
}

func (fb *floodBank) advance(d time.Duration) { fb.mu.Lock(); fb.now = fb.now.Add(d); fb.mu.Unlock() }

// codes returns the codes sent to the user of token.
func (fb *floodBank) codes(token string) []string {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return fb.sent[demobank.UserLabel(token)]
}

func (fb *floodBank) lastCode(token string) string {
	c := fb.codes(token)
	if len(c) == 0 {
		return ""
	}
	return c[len(c)-1]
}

// answer is one of the bank's answers.
type answer struct {
	status     int
	err        string // the problem's code
	retryAfter string
}

// call sends body to path as the user of token from the client address addr.
func (fb *floodBank) call(t *testing.T, method, addr, path, token, body string) answer {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.RemoteAddr = addr
	r.Header.Set("X-Token", token)
	w := httptest.NewRecorder()
	fb.bank.ServeHTTP(w, r)
	var problem struct{ Error string }
	if err := json.Unmarshal(w.Body.Bytes(), &problem); err != nil {
		t.Fatalf("%s %s: answer %s is not JSON: %v", method, path, w.Body, err)
	}
	return answer{status: w.Code, err: problem.Error, retryAfter: w.Header().Get("Retry-After")}
}

func (fb *floodBank) askCode(t *testing.T, addr, token, jwk string) answer {
	t.Helper()
	return fb.call(t, http.MethodPost, addr, "/devices/code", token, `{"public_key":`+jwk+`}`)
}

func (fb *floodBank) enrol(t *testing.T, addr, token, code, jwk string) answer {
	t.Helper()
	return fb.call(t, http.MethodPost, addr, "/devices", token, `{"code":"`+code+`","public_key":`+jwk+`}`)
}

// TestCodeFlood: 20 000 code requests with fresh tokens from one address, in under a minute,
// make the bank forget no lock, no pending code and no count of codes sent, and shut
// enrolment for nobody on another address.
func TestCodeFlood(t *testing.T) {
	const flooder = "198.51.100.66:40000"
	fb := newFloodBank(0)
	key := jwkOf(t)

	// locked has given five wrong codes; pending was sent a code it has not typed yet; bombed
	// was sent the five codes of ten minutes.
	fb.askCode(t, "192.0.2.1:1000", "locked", key)
	for i := range 5 {
		fb.enrol(t, "192.0.2.1:1000", "locked", fmt.Sprintf("x%05d", i), key)
	}
	if a := fb.askCode(t, "192.0.2.1:1000", "locked", key); a.err != "enrolment_locked" {
		t.Fatalf("locked before the flood: %+v", a)
	}
	pendingKey := jwkOf(t)
	if a := fb.askCode(t, "192.0.2.2:1000", "pending", pendingKey); a.status != http.StatusAccepted {
		t.Fatalf("pending's code: %+v", a)
	}
	for range 5 {
		fb.askCode(t, "192.0.2.3:1000", "bombed", key)
	}

	refused := map[string]int{}
	accepted := 0
	for i := range 20000 {
		fb.advance(2 * time.Millisecond) // 40 s in all
		switch a := fb.askCode(t, flooder, fmt.Sprint("flood-", i), key); {
		case a.status == http.StatusAccepted:
			accepted++
		case a.status == http.StatusTooManyRequests || a.status == http.StatusServiceUnavailable:
			if a.retryAfter == "" {
				t.Fatalf("flood request %d refused without Retry-After: %+v", i, a)
			}
			refused[fmt.Sprint(a.status, " ", a.err)]++
		default:
			t.Fatalf("flood request %d: %+v", i, a)
		}
		// A newcomer on another address enrols in the middle of the flood.
		if i%2000 == 1999 {
			addr, token, jwk := fmt.Sprintf("203.0.113.%d:5000", i/2000), fmt.Sprint("newcomer-", i), jwkOf(t)
			if a := fb.askCode(t, addr, token, jwk); a.status != http.StatusAccepted {
				t.Fatalf("%s during the flood: code %+v", token, a)
			}
			if a := fb.enrol(t, addr, token, fb.lastCode(token), jwk); a.status != http.StatusCreated {
				t.Fatalf("%s during the flood: enrol %+v", token, a)
			}
		}
	}
	t.Logf("flood of 20000 fresh tokens from one address: %d codes sent, refused %v", accepted, refused)
	if accepted > demobank.DefaultMaxCodesPerAddress {
		t.Errorf("one address was sent %d codes in a minute", accepted)
	}

	if a := fb.enrol(t, "192.0.2.1:1000", "locked", "000000", key); a.err != "enrolment_locked" {
		t.Errorf("the lock after the flood: %+v", a)
	}
	if a := fb.askCode(t, "192.0.2.1:1000", "locked", key); a.err != "enrolment_locked" {
		t.Errorf("a code for the locked user after the flood: %+v", a)
	}
	if a := fb.enrol(t, "192.0.2.2:1000", "pending", fb.lastCode("pending"), pendingKey); a.status != http.StatusCreated {
		t.Errorf("the pending code after the flood: %+v", a)
	}
	if a := fb.askCode(t, "192.0.2.3:1000", "bombed", key); a.err != "too_many_codes" || a.retryAfter == "" {
		t.Errorf("a sixth code in ten minutes after the flood: %+v", a)
	}
	fb.mu.Lock()
	for user, codes := range fb.sent {
		if len(codes) > 5 {
			t.Errorf("%s was sent %d codes in a minute", user, len(codes))
		}
	}
	fb.mu.Unlock()
}

// TestGuardedUsersStay: a bank full of users forgets only those whose state protects nobody;
// full of users it may not forget, it refuses a new one until the first guard lapses.
func TestGuardedUsersStay(t *testing.T) {
	fb := newFloodBank(4)
	key, pendingKey := jwkOf(t), jwkOf(t)
	fb.askCode(t, "192.0.2.1:1000", "locked", key)
	for i := range 5 {
		fb.enrol(t, "192.0.2.1:1000", "locked", fmt.Sprintf("x%05d", i), key)
	}
	fb.askCode(t, "192.0.2.2:1000", "pending", pendingKey)
	for i := range 100 {
		if a := fb.call(t, http.MethodGet, "198.51.100.66:4000", "/balance", fmt.Sprint("stranger-", i), ""); a.status != http.StatusOK {
			t.Fatalf("stranger %d: %+v", i, a)
		}
	}
	if a := fb.enrol(t, "192.0.2.1:1000", "locked", "000000", key); a.err != "enrolment_locked" || a.retryAfter != "900" {
		t.Fatalf("the lock after 100 strangers: %+v", a)
	}
	// Two more codes fill the bank with guarded users.
	for _, token := range []string{"third", "fourth"} {
		if a := fb.askCode(t, "192.0.2.3:1000", token, key); a.status != http.StatusAccepted {
			t.Fatalf("%s's code: %+v", token, a)
		}
	}
	if a := fb.call(t, http.MethodGet, "198.51.100.66:4000", "/balance", "stranger", ""); a.status != http.StatusServiceUnavailable || a.err != "bank_full" || a.retryAfter != "600" {
		t.Fatalf("a new user of a bank full of guarded users: %+v", a)
	}
	if a := fb.askCode(t, "198.51.100.66:4000", "stranger", key); a.err != "bank_full" || len(fb.codes("stranger")) != 0 {
		t.Fatalf("a code for a new user of a bank full of guarded users: %+v", a)
	}
	if a := fb.enrol(t, "192.0.2.2:1000", "pending", fb.lastCode("pending"), pendingKey); a.status != http.StatusCreated {
		t.Fatalf("the pending code in a full bank: %+v", a)
	}
	// Ten minutes on, the codes have expired and the lock alone is guarded.
	fb.advance(10 * time.Minute)
	if a := fb.call(t, http.MethodGet, "198.51.100.66:4000", "/balance", "stranger", ""); a.status != http.StatusOK {
		t.Fatalf("a new user once the codes expired: %+v", a)
	}
	if a := fb.enrol(t, "192.0.2.1:1000", "locked", "000000", key); a.err != "enrolment_locked" || a.retryAfter != "300" {
		t.Fatalf("the lock ten minutes on: %+v", a)
	}
	fb.advance(5 * time.Minute)
	if a := fb.askCode(t, "192.0.2.1:1000", "locked", key); a.status != http.StatusAccepted {
		t.Fatalf("a code once the lock ended: %+v", a)
	}
}

// TestCodesPerAddress: codes are bounded per client address, an IPv6 one counted with its
// /64, and the bound frees up as its codes age.
func TestCodesPerAddress(t *testing.T) {
	now := clock
	bank := demobank.New(&demobank.Options{RequireDeviceProof: true, MaxCodesPerAddress: 2,
		Now: func() time.Time { return now }, SendCode: func(user, code string) {}})
	fb := &floodBank{bank: bank}
	key := jwkOf(t)
	for i, tc := range []struct {
		addr string
		want int
	}{
		{"[2001:db8:1:2::10]:443", http.StatusAccepted},
		{"[2001:db8:1:2:ffff::1]:443", http.StatusAccepted},
		{"[2001:db8:1:2::99]:443", http.StatusTooManyRequests}, // the same /64
		{"[2001:db8:1:3::10]:443", http.StatusAccepted},
		{"192.0.2.1:80", http.StatusAccepted},
		{"[::ffff:192.0.2.1]:81", http.StatusAccepted}, // the same IPv4 address
		{"192.0.2.1:82", http.StatusTooManyRequests},
	} {
		a := fb.askCode(t, tc.addr, fmt.Sprint("user-", i), key)
		if a.status != tc.want || (a.status == http.StatusTooManyRequests && (a.err != "too_many_codes_here" || a.retryAfter != "600")) {
			t.Errorf("%s: %+v, want %d", tc.addr, a, tc.want)
		}
	}
	now = now.Add(10 * time.Minute)
	if a := fb.askCode(t, "192.0.2.1:82", "user-later", key); a.status != http.StatusAccepted {
		t.Errorf("ten minutes on: %+v", a)
	}
}
