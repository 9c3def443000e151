package pii

import (
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/convengine/engine"
)

// BenchmarkFind measures detection on what a turn carries: a typed message or a transcript of
// about 200 bytes, with or without a number (one pasted with invisible and full-width
// characters), and 8 KiB of text.
func BenchmarkFind(b *testing.B) {
	d, err := New(&Options{Patterns: []Pattern{{Kind: Account, Name: "routing", Regexp: `\b\d{9}\b`}}})
	if err != nil {
		b.Fatal(err)
	}
	filler := "I would like to check the balance of my savings account and see whether the transfer I made on Monday has gone through, thanks. "
	texts := []struct{ name, text string }{
		{"200B-none", "Hello, I would like to know why I was charged twice for the same purchase at the supermarket last Friday, it was about 45 euros, can you help?"},
		{"200B-card", "Hello, please block my card 4111 1111 1111 1111 because I think it was stolen yesterday evening at the station, and send me a new one."},
		{"200B-iban", "Please transfer 250 euros tomorrow to ES91 2100 0418 4502 0005 1332, the account of my landlord, with the reference rent for May."},
		{"200B-spoken", "yes my card number is four one one one, one one one one, one one one one, one one one one and the expiry is next year"},
		{"200B-pasted", "Hello, please block my card 4539\u200b1488\u200b0343\u200b6467 (or ４５３９．１４８８．０３４３．６４６７ as the app shows it), stolen yesterday at the station."},
		{"8KiB", strings.Repeat(filler, 8192/len(filler)) + "card 4111 1111 1111 1111"},
	}
	for _, tt := range texts {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(tt.text)))
			b.ReportAllocs()
			for b.Loop() {
				d.Find(tt.text)
			}
		})
	}
}

// BenchmarkLogLine measures one engine-like log line with an error text of a backend, through
// RedactingHandler (cards and IBANs) and through a Privacy's LogHandler for a tenant whose
// policy masks phone numbers in logs, the tenant in the record or bound with With.
func BenchmarkLogLine(b *testing.B) {
	p, err := NewPrivacy(nil)
	if err != nil {
		b.Fatal(err)
	}
	p.Turn(&engine.Tenant{Key: "pk", Privacy: json.RawMessage(`{"preset":"banking","kinds":{"phone":{}}}`)})
	floor, _ := New(&Options{Kinds: []Kind{Card, IBAN}})
	text := "mcptools: MCP server unavailable: account locked: call +34 612 345 678 about card 4111 1111 1111 1111"
	for _, tc := range []struct {
		name string
		log  *slog.Logger
		with bool
	}{
		{"floor", slog.New(RedactingHandler(slog.NewJSONHandler(io.Discard, nil), floor)), false},
		{"tenant", slog.New(p.LogHandler(slog.NewJSONHandler(io.Discard, nil), floor)), false},
		{"tenant-with", slog.New(p.LogHandler(slog.NewJSONHandler(io.Discard, nil), floor)), true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			log := tc.log
			if tc.with {
				log = log.With("tenant", "pk", "requestId", "prod-1")
			}
			for b.Loop() {
				if tc.with {
					log.Warn("listing tools failed", "err", text)
				} else {
					log.Warn("listing tools failed", "requestId", "prod-1", "tenant", "pk", "err", text)
				}
			}
		})
	}
}
