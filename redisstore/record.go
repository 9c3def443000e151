package redisstore

import (
	"encoding/json"
	"fmt"

	"github.com/convengine/engine"
)

// version is the version of the records this package writes. It reads versions 1 to version;
// a release that changes a record's meaning writes version+1 and keeps reading the older ones.
const version = 1

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

// checkVersion reads the version of a record.
func checkVersion(data []byte) error {
	var head struct {
		V *int `json:"v"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("%w: not a versioned JSON object", ErrUnreadable)
	}
	switch {
	case head.V == nil || *head.V < 1:
		return fmt.Errorf("%w: no version", ErrUnreadable)
	case *head.V > version:
		return fmt.Errorf("%w: version %d is newer than this engine reads (%d)", ErrUnreadable, *head.V, version)
	}
	return nil
}

func encodeSession(s *engine.Session) ([]byte, error) {
	return json.Marshal(sessionRecord{V: version, Session: s})
}

func decodeSession(data []byte) (*engine.Session, error) {
	if err := checkVersion(data); err != nil {
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

func encodeResult(result []byte) string {
	return mustMarshal(actionRecord{V: version, State: stateDone, Result: result})
}

// decodeAction returns the result of a finished action, or ErrActionInProgress.
func decodeAction(data []byte) ([]byte, error) {
	if err := checkVersion(data); err != nil {
		return nil, err
	}
	var r actionRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: an action record of the wrong shape", ErrUnreadable)
	}
	switch r.State {
	case stateRunning:
		return nil, engine.ErrActionInProgress
	case stateDone:
		if r.Result == nil {
			r.Result = []byte{} // a finished action, never to be taken for a claim
		}
		return r.Result, nil
	}
	return nil, fmt.Errorf("%w: an action record in an unknown state", ErrUnreadable)
}
