package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/convengine/engine"
)

// reloadOnHangup reads the tenants file again on SIGHUP and serves it if it is valid; a broken
// file is logged and the tenants in service stay. Turns in progress keep their tenant. The
// returned function stops listening.
func reloadOnHangup(ctx context.Context, store *engine.ReloadableTenants, load func() (engine.TenantStore, error), log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-hup:
				next, err := load()
				if err != nil {
					log.Error("tenants not reloaded; the previous ones stay in service", "err", err)
					continue
				}
				store.Replace(next)
				log.Info("tenants reloaded")
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-exited
	}
}
