package engine

import "log/slog"

// Secret is a value that must never appear in a log line, an error message or a response: the
// end user's token, a session token, a forwarded header value. Every way of printing it prints
// "[redacted]"; [Secret.Reveal] returns the value for the one place that sends it on.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// GoString returns "[redacted]", so %#v does not print the value either.
func (s Secret) GoString() string { return redacted }

// LogValue implements [slog.LogValuer].
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalText returns "[redacted]", so encoders do not write the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
