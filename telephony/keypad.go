package telephony

import (
	"context"
	"sync"
	"time"

	"github.com/convengine/engine"
)

// Ending is why a keypad read ended.
type Ending uint8

// Endings of [Keypad.Read].
const (
	// EndPound: the caller pressed '#'.
	EndPound Ending = iota
	// EndFull: the caller typed the most digits the read takes.
	EndFull
	// EndTimeout: no key came within the time allowed.
	EndTimeout
	// EndStar: the caller pressed '*', to cancel.
	EndStar
)

// maxBuffered bounds the keys a keypad keeps before they are read.
const maxBuffered = 64

// A Keypad collects the keys a caller presses (DTMF). Keys pressed while it is not armed are
// dropped: the digits of a PIN are secrets, kept only while something asks for them. Press is
// called by the transport's reader; Arm and Read by the call. It is safe for concurrent use.
type Keypad struct {
	mu    sync.Mutex
	armed bool
	keys  []byte
	wake  chan struct{}
}

// Press adds a key: '0'–'9', '*', '#' (others are dropped).
func (k *Keypad) Press(key byte) {
	if !(key >= '0' && key <= '9' || key == '*' || key == '#') {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.armed || len(k.keys) >= maxBuffered {
		return
	}
	k.keys = append(k.keys, key)
	if k.wake != nil {
		close(k.wake)
		k.wake = nil
	}
}

// Arm starts keeping keys for the next Read: keys pressed while a prompt plays count.
func (k *Keypad) Arm() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.keys)
	k.keys, k.armed = k.keys[:0], true
}

// Read collects digits until '#', '*', max digits, or a pause: first is how long the first key
// may take, between how long each next one. Keys pressed since [Keypad.Arm] count; without one,
// the keypad is armed now. It disarms the keypad when it returns. The digits are an
// [engine.Secret]: they never print.
func (k *Keypad) Read(ctx context.Context, max int, first, between time.Duration) (engine.Secret, Ending, error) {
	k.mu.Lock()
	if !k.armed {
		k.keys, k.armed = k.keys[:0], true
	}
	k.mu.Unlock()
	digits := make([]byte, 0, max)
	defer clear(digits)
	defer k.disarm()
	wait := first
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		k.mu.Lock()
		if len(k.keys) > 0 {
			key := k.keys[0]
			k.keys[0] = 0
			k.keys = k.keys[1:]
			k.mu.Unlock()
			switch key {
			case '#':
				return engine.Secret(digits), EndPound, nil
			case '*':
				return "", EndStar, nil
			}
			digits = append(digits, key)
			if len(digits) >= max {
				return engine.Secret(digits), EndFull, nil
			}
			timer.Reset(between)
			continue
		}
		wake := make(chan struct{})
		k.wake = wake
		k.mu.Unlock()
		select {
		case <-wake:
		case <-timer.C:
			return engine.Secret(digits), EndTimeout, nil
		case <-ctx.Done():
			return "", EndTimeout, ctx.Err()
		}
	}
}

func (k *Keypad) disarm() {
	k.mu.Lock()
	defer k.mu.Unlock()
	clear(k.keys)
	k.keys, k.armed, k.wake = k.keys[:0], false, nil
}
