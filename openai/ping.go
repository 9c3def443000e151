package openai

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/convengine/engine"
)

var _ engine.Pinger = (*Model)(nil)

// Ping reports whether the server answers for the configured model (GET /models/{model}), so
// that a readiness probe fails while the model cannot be reached. It sends no prompt and costs
// no tokens.
func (m *Model) Ping(ctx context.Context) error {
	svc := openai.NewModelService(m.s.requestOptions()...)
	if _, err := svc.Get(ctx, m.s.Model); err != nil {
		return fmt.Errorf("openai: model %s: %w", m.s.Model, apiError(err))
	}
	return nil
}
