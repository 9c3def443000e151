package openai

import (
	"context"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/convengine/engine"
)

var _ engine.Pinger = (*Model)(nil)

// Ping reports whether the server answers for the configured model (GET /models/{model}), so
// that a readiness probe fails while the model cannot be reached. It sends no prompt and costs
// no tokens.
func (m *Model) Ping(ctx context.Context) error {
	svc := openai.NewModelService(m.s.requestOptions()...)
	var resp *http.Response
	if _, err := svc.Get(ctx, m.s.Model, option.WithResponseInto(&resp)); err != nil {
		return fmt.Errorf("openai: model %s: %w", m.s.Model, statusError(err, resp))
	}
	return nil
}
