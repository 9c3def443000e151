package openai

import (
	"context"

	"github.com/openai/openai-go/v3"

	"github.com/convengine/engine"
)

// warmUpMessage follows the stable prefix in a warm-up: some chat templates of compatible
// servers refuse a conversation without a user message.
const warmUpMessage = "Hi"

// Warm implements [engine.Warmer]: it sends the tenant's stable prefix (the tools and the
// system prompt, in the bytes turns send them) with the tenant's prompt_cache_key, and asks for
// a single token, so that the provider caches the prefix before the first turn. req.Context and
// req.Messages are ignored. It returns the warm-up's finish event, with the usage it cost.
func (m *Model) Warm(ctx context.Context, req *engine.ModelRequest) (engine.ModelEvent, error) {
	warm := *req
	warm.Context = ""
	warm.Messages = []engine.Message{{Role: engine.RoleUser, Content: warmUpMessage}}
	p := m.params(&warm)
	p.MaxCompletionTokens = openai.Int(1)
	var (
		finish engine.ModelEvent
		err    error
	)
	m.stream(ctx, p, func(ev engine.ModelEvent, e error) bool {
		switch {
		case e != nil:
			err = e
		case ev.Kind == engine.EventFinish:
			finish = ev
		}
		return true
	})
	return finish, err
}
