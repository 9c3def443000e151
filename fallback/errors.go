package fallback

import (
	"strings"
	"time"

	"github.com/convengine/engine"
)

// UnavailableError is the error of a completion no model of a chain could answer: each was
// down (its breaker open, its server asking for time) or failed before saying anything. It
// wraps [engine.ErrModelUnavailable], so that the turn fails with model_unavailable, and each
// model's error.
type UnavailableError struct {
	// Models are the chain's models, in order, with why each did not answer.
	Models []string
	Errs   []error
	// RetryAfter is the shortest wait until a model may be tried again: a server's
	// Retry-After or a breaker's cool-down; 0 when a model may be tried at once.
	RetryAfter time.Duration
}

// add notes why a model did not answer, making u on the first; it returns u.
func (u *UnavailableError) add(name string, err error, wait time.Duration) *UnavailableError {
	if u == nil {
		u = &UnavailableError{RetryAfter: wait}
	}
	u.RetryAfter = min(u.RetryAfter, wait)
	u.Models = append(u.Models, name)
	u.Errs = append(u.Errs, err)
	return u
}

// Error names the models and their failures; the failures' texts never hold what a server
// explained, which may quote the prompt.
func (u *UnavailableError) Error() string {
	var b strings.Builder
	b.WriteString("fallback: no model could answer")
	for i, name := range u.Models {
		b.WriteString("; ")
		b.WriteString(name)
		if u.Errs[i] != nil {
			b.WriteString(": ")
			b.WriteString(u.Errs[i].Error())
		}
	}
	return b.String()
}

// Unwrap returns [engine.ErrModelUnavailable] and each model's error.
func (u *UnavailableError) Unwrap() []error {
	return append([]error{engine.ErrModelUnavailable}, u.Errs...)
}
