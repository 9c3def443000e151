package redisstore

import (
	"encoding/json"
	"fmt"

	"github.com/convengine/engine"
)

// version is the version of the records this package writes. It reads versions 1 to version,
// and sealedVersion of action results; a release that changes a record's meaning writes a new
// version and keeps reading the older ones.
const version = 1

// sealedVersion is the version of an action's result sealed (Options.SealKey): a release that
// reads only version 1 refuses it, rather than take it for a result that is empty.
const sealedVersion = 2

// sessionRecord is a session's value: the whole [engine.Session] as JSON, so that fields added
// to it are kept without a change here.
type sessionRecord struct {
	V       int             `json:"v"`
	Session *engine.Session `json:"session"`
}

// Action states.
const (
	stateRunning = "running"
	stateDone    = "done"
)

// actionRecord is an action's value: claimed while it runs, then its reply.
type actionRecord struct {
	V     int    `json:"v"`
	State string `json:"state"`
	// Owner is the owner of a running action's claim. Records of releases before owners have
	// none; such a claim ends with its lease.
	Owner  string `json:"owner,omitempty"`
	Result []byte `json:"result,omitempty"`
	// Sealed is the result sealed, bound to the record's key, in a record of sealedVersion.
	Sealed []byte `json:"sealed,omitempty"`
}

// claimValue is a single-use value's record: it never changes.
var claimValue = mustMarshal(struct {
	V int `json:"v"`
}{version})

// runningValue is the record of owner's claim. The finish and abandon scripts compare a record
// with it byte for byte.
func runningValue(owner string) string {
	return mustMarshal(actionRecord{V: version, State: stateRunning, Owner: owner})
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// checkVersion reads the version of a record of a kind this package writes in versions 1 to
// newest.
func checkVersion(data []byte, newest int) error {
	var head struct {
		V *int `json:"v"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("%w: not a versioned JSON object", ErrUnreadable)
	}
	switch {
	case head.V == nil || *head.V < 1:
		return fmt.Errorf("%w: no version", ErrUnreadable)
	case *head.V > newest:
		return fmt.Errorf("%w: version %d is newer than this engine reads (%d)", ErrUnreadable, *head.V, newest)
	}
	return nil
}

func encodeSession(s *engine.Session) ([]byte, error) {
	return json.Marshal(sessionRecord{V: version, Session: s})
}

func decodeSession(data []byte) (*engine.Session, error) {
	if err := checkVersion(data, version); err != nil {
		return nil, err
	}
	var r sessionRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Session == nil {
		return nil, fmt.Errorf("%w: a session record without a session", ErrUnreadable)
	}
	// JSON null comes back as the bytes "null": keep absent metadata absent.
	if string(r.Session.Metadata) == "null" {
		r.Session.Metadata = nil
	}
	return r.Session, nil
}

// encodeResult returns the record of an action's result, sealed when the store seals.
func (s *Store) encodeResult(key string, result []byte) string {
	if s.sealer == nil {
		return mustMarshal(actionRecord{V: version, State: stateDone, Result: result})
	}
	return mustMarshal(actionRecord{V: sealedVersion, State: stateDone, Sealed: seal(s.sealer.aead(key), result, key)})
}

// decodeAction returns the result of a finished action, or ErrActionInProgress. A result that
// does not open, is sealed without a SealKey, or is not sealed with one, is ErrUnreadable.
func (s *Store) decodeAction(key string, data []byte) ([]byte, error) {
	if err := checkVersion(data, sealedVersion); err != nil {
		return nil, err
	}
	var r actionRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: an action record of the wrong shape", ErrUnreadable)
	}
	if r.V == sealedVersion && r.State != stateDone {
		return nil, fmt.Errorf("%w: version %d of an action record that is not a result", ErrUnreadable, r.V)
	}
	switch r.State {
	case stateRunning:
		return nil, engine.ErrActionInProgress
	case stateDone:
		sealed := r.V == sealedVersion
		switch {
		case sealed && s.sealer == nil:
			return nil, fmt.Errorf("%w: an action's result sealed, and the store has no SealKey", ErrUnreadable)
		case !sealed && s.sealer != nil:
			return nil, fmt.Errorf("%w: an action's result not sealed, and the store seals", ErrUnreadable)
		case sealed:
			result, err := open(s.sealer.aead(key), r.Sealed, key)
			if err != nil {
				return nil, fmt.Errorf("%w: an action's result that does not open", ErrUnreadable)
			}
			r.Result = result
		}
		if r.Result == nil {
			r.Result = []byte{} // a finished action, never to be taken for a claim
		}
		return r.Result, nil
	}
	return nil, fmt.Errorf("%w: an action record in an unknown state", ErrUnreadable)
}
