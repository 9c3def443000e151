package handoff

import (
	"context"
	"fmt"
	"strings"

	"github.com/convengine/engine"
)

// Brief is what a summary is written from: the conversation's latest lines (under the tenant's
// privacy policy) and why it goes to a person.
type Brief struct {
	Locale string
	Reason string
	Lines  []Line
}

// Template is the summary without a language model: what the customer wanted (their first
// and last requests), what the assistant did, and why it hands over.
func Template(b *Brief) string {
	var asked, did []string
	for _, l := range b.Lines {
		switch l.Role {
		case "user":
			asked = append(asked, l.Text)
		case "assistant":
			did = append(did, l.Text)
		}
	}
	var sb strings.Builder
	switch len(asked) {
	case 0:
		sb.WriteString("The customer asked for a person at once.")
	case 1:
		fmt.Fprintf(&sb, "The customer asked: %q.", clip(asked[0], 200))
	default:
		fmt.Fprintf(&sb, "The customer first asked: %q; last: %q (%d requests).", clip(asked[0], 200), clip(asked[len(asked)-1], 200), len(asked))
	}
	if len(did) > 0 {
		fmt.Fprintf(&sb, " The assistant last answered: %q.", clip(did[len(did)-1], 300))
	}
	fmt.Fprintf(&sb, " Handed over because %s. Language: %s.", b.Reason, b.Locale)
	return sb.String()
}

// ModelSummary returns an Options.Summarize that asks m (the tenant's language model) for the
// summary, in at most 400 tokens.
func ModelSummary(m engine.Model) func(ctx context.Context, t *engine.Tenant, b *Brief) (string, error) {
	return func(ctx context.Context, t *engine.Tenant, b *Brief) (string, error) {
		var conv strings.Builder
		for _, l := range b.Lines {
			fmt.Fprintf(&conv, "%s: %s\n", l.Role, l.Text)
		}
		req := &engine.ModelRequest{Tenant: t, Locale: b.Locale, MaxOutputTokens: 400,
			System:   "You brief a bank's contact-centre agent who takes over a conversation from an assistant. In three short sentences, in English: what the customer wanted, what the assistant did (tools, confirmations and their outcomes), and why it hands over. No greeting. Never repeat a card number, an account number or a placeholder's value.",
			Messages: []engine.Message{{Role: engine.RoleUser, Content: "Reason for handover: " + b.Reason + "\n\nConversation:\n" + conv.String()}}}
		var out strings.Builder
		for ev, err := range m.Stream(ctx, req) {
			if err != nil {
				return "", err
			}
			out.WriteString(ev.Text)
		}
		return strings.TrimSpace(out.String()), nil
	}
}
