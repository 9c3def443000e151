package openai_test

import (
	"context"
	"testing"

	"github.com/convengine/engine/enginetest"
)

// BenchmarkStream measures one streamed completion over loopback HTTP against the replay
// server: building the request, the SDK's SSE decoding and accumulation, and the events.
func BenchmarkStream(b *testing.B) {
	for _, fixture := range []string{"text", "demo_home_2", "demo_transactions_2"} {
		b.Run(fixture, func(b *testing.B) {
			srv := enginetest.NewReplayServer(b, enginetest.OpenAIFixtures(), func(*enginetest.ReplayRequest) string { return fixture })
			m := newModel(b, srv.URL, nil)
			req := balanceRequest()
			req.Tools = demoTools()
			b.ReportAllocs()
			for b.Loop() {
				if r := collect(m.Stream(context.Background(), req)); r.err != nil || r.finish == nil {
					b.Fatal(r.err)
				}
			}
		})
	}
}
