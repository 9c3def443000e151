package engine

import (
	"encoding/json"
	"strings"
)

// modelRequest composes what the model sees for a turn: the tenant's prompt with the engine's
// rules, the facts of this turn, the conversation so far and the tools.
func (e *Engine) modelRequest(t *turn) *ModelRequest {
	msgs := make([]Message, 0, len(t.history)+1)
	msgs = append(msgs, t.history...)
	if t.mode != ModeHome {
		msgs = append(msgs, Message{Role: RoleUser, Content: t.transcript})
	}
	return &ModelRequest{
		Tenant: t.req.Tenant, Environment: t.req.Environment.Name,
		System: stablePrompt(t.req.Tenant), Context: turnFacts(t),
		Messages: msgs, Tools: t.specs, Mode: t.mode, Locale: t.locale, Country: t.country,
		Screen: t.screen, Metadata: t.req.Metadata,
	}
}

// stablePrompt is the part of the system prompt that every turn of a tenant shares: the
// tenant's prompt and the engine's fixed rules. Nothing that varies per turn or per user may
// appear here, so that providers can cache it.
func stablePrompt(tn *Tenant) string {
	var b strings.Builder
	if p := strings.TrimSpace(tn.Prompt); p != "" {
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	b.WriteString("Rules of this conversation:\n")
	b.WriteString("- Put figures and lists in widgets with show_stat, show_list and show_progress rather than reading them all out; offer next steps with set_suggestions.\n")
	b.WriteString("- Calling an action tool only proposes the action: the user confirms it on their device. Never say an action is done.\n")
	return b.String()
}

// turnFacts is the part of the system prompt that belongs to this turn only.
func turnFacts(t *turn) string {
	var b strings.Builder
	b.WriteString("About this turn:\n")
	b.WriteString("- Answer in the language of the locale " + t.locale + ".\n")
	switch t.mode {
	case ModeVoice:
		b.WriteString("- Your answer is spoken aloud: one to three short plain sentences, no markup, no lists, no URLs.\n")
	case ModeHome:
		b.WriteString("- The user just opened the app and said nothing: greet them and give a short overview that is useful at a glance.\n")
	default:
		b.WriteString("- Keep the spoken answer short; it is read aloud.\n")
	}
	if t.country != "" {
		b.WriteString("- The user's country is ")
		b.WriteString(t.country)
		b.WriteString(".\n")
	}
	if t.screen != "" {
		b.WriteString("- The user is on the screen: ")
		b.WriteString(t.screen)
		b.WriteString("\n")
	}
	if len(t.req.Metadata) > 0 {
		if md, err := json.Marshal(t.req.Metadata); err == nil {
			b.WriteString("- Client context (JSON): ")
			b.Write(md)
			b.WriteString("\n")
		}
	}
	return b.String()
}
