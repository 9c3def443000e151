package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/pgstore"
	"github.com/convengine/engine/record/sqlitestore"
)

// recordsPlace is where the conversation record is kept: -records / ENGINE_RECORDS.
type recordsPlace struct {
	off      bool
	why      string // why the default record is off
	postgres string // a postgres:// URL
	sqlite   string // a SQLite file
}

// parseRecords reads -records: "off", "sqlite:PATH", a postgres:// URL, or "" for the default,
// a SQLite file in the user's data directory ($XDG_DATA_HOME, else ~/.local/share).
func parseRecords(spec string, getenv func(string) string) (recordsPlace, error) {
	switch {
	case spec == "off":
		return recordsPlace{off: true}, nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return recordsPlace{postgres: spec}, nil
	case strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(spec, "sqlite:")
		if path == "" {
			return recordsPlace{}, errors.New("-records: sqlite: needs a file, as in sqlite:/var/lib/engine/records.db")
		}
		return recordsPlace{sqlite: path}, nil
	case spec != "":
		return recordsPlace{}, errors.New(`-records: must be "off", "sqlite:PATH" or a postgres:// URL`)
	}
	dir := getenv("XDG_DATA_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			// No user's directory (a bare container): the banner and the log say it is off.
			return recordsPlace{off: true, why: "no data directory ($XDG_DATA_HOME or $HOME) for the default record; name one with -records"}, nil
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return recordsPlace{sqlite: filepath.Join(dir, "convengine", "records.db")}, nil
}

// String names the place for the banner and the logs, without a password.
func (p recordsPlace) String() string {
	switch {
	case p.off && p.why != "":
		return "off: " + p.why
	case p.off:
		return "off"
	case p.postgres != "":
		return redactURL(p.postgres)
	}
	return "sqlite:" + p.sqlite
}

// open opens the place's store; nil when records are off.
func (p recordsPlace) open(ctx context.Context) (record.Store, error) {
	switch {
	case p.off:
		return nil, nil
	case p.postgres != "":
		s, err := pgstore.Open(ctx, p.postgres)
		if err != nil {
			return nil, fmt.Errorf("records: %w", err)
		}
		return s, nil
	}
	if err := os.MkdirAll(filepath.Dir(p.sqlite), 0o700); err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	s, err := sqlitestore.Open(ctx, p.sqlite, nil)
	if err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	return s, nil
}

// keyFile is where the SQLite default keeps a generated key when ENGINE_SIGNING_KEY is not set:
// beside its database.
func (p recordsPlace) keyFile() string {
	if p.sqlite == "" {
		return ""
	}
	return p.sqlite + ".key"
}

// keptKey reads the key kept in file, or makes one and keeps it there (mode 0600): records must
// be signed and sealed with the same key from one start to the next.
func keptKey(file string) (key []byte, made bool, err error) {
	b, err := os.ReadFile(file)
	if err == nil {
		// The file holds what ENGINE_SIGNING_KEY would, read by the same rules.
		if key, _, err = signingKey(string(b)); err != nil || len(b) == 0 {
			return nil, false, fmt.Errorf("%s does not hold base64 of at least 32 bytes", file)
		}
		return key, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	key = make([]byte, 32)
	rand.Read(key)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, false, err
	}
	_, err = f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return key, true, err
}

// redactURL is a database URL without its password, for the banner and the logs.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

// engineKey is ENGINE_SIGNING_KEY, or, without it, the key the SQLite record keeps beside its
// database, or a key made for this process when records are off. Replicas (Redis) and
// PostgreSQL records need the variable: their key must be the same on every replica.
func engineKey(b64 string, redis bool, place recordsPlace, log *slog.Logger) ([]byte, error) {
	key, generated, err := signingKey(b64)
	switch {
	case err != nil:
		return nil, err
	case !generated:
		return key, nil
	case redis:
		return nil, errors.New("ENGINE_SIGNING_KEY is required with Redis: replicas sharing a store must sign and verify tokens with the same key, and a generated key is known to this process alone")
	case place.postgres != "":
		return nil, errors.New("ENGINE_SIGNING_KEY is required with PostgreSQL records: the record is signed and sealed with keys derived from it, on every replica and from one start to the next")
	case place.off:
		log.Warn("ENGINE_SIGNING_KEY is not set: generated a key for this process; tokens will not survive a restart or work across replicas")
		return key, nil
	}
	file := place.keyFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("records: %w", err)
	}
	key, made, err := keptKey(file)
	if err != nil {
		return nil, fmt.Errorf("records: the engine's key: %w", err)
	}
	if made {
		log.Warn("ENGINE_SIGNING_KEY is not set: made the engine's key and keeps it beside the record (mode 0600); tokens and the record use it from one start to the next", "file", file)
	} else {
		log.Info("ENGINE_SIGNING_KEY is not set: the engine's key is the one kept beside the record", "file", file)
	}
	return key, nil
}

// openRecorder opens the record's store and its Recorder, whose retention sweeper reads the
// tenants' records sections; nil when records are off. close flushes the last turns, writes
// the last checkpoint and closes the store.
func openRecorder(ctx context.Context, place recordsPlace, key []byte, previous [][]byte, tenants func() []*engine.Tenant, log *slog.Logger) (*record.Recorder, func(), error) {
	store, err := place.open(ctx)
	if err != nil || store == nil {
		return nil, func() {}, err
	}
	rec, err := record.New(store, &record.Options{Key: key, PreviousKeys: previous, Logger: log,
		OnAlarm: func(a record.Alarm) { log.Error("the conversation record dropped an entry", "alarm", a) },
		Retention: func(context.Context) (map[string]record.Retention, error) {
			out := map[string]record.Retention{}
			for _, t := range tenants() {
				r, err := record.RetentionOf(t)
				if err != nil {
					return nil, err
				}
				out[t.Key] = r
			}
			return out, nil
		}})
	if err != nil {
		store.Close()
		return nil, func() {}, err
	}
	log.Info("conversation record", "store", place.String())
	return rec, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rec.Close(cctx); err != nil {
			log.Error("the conversation record could not write its last entries at shutdown", "err", err)
		}
		store.Close()
	}, nil
}

// tenantsOf lists the tenants served now, for the record's retention: those of the last
// tenants file loaded (a reload replaces them), or the demo's.
func tenantsOf(current *atomic.Pointer[engine.TenantStore]) func() []*engine.Tenant {
	return func() []*engine.Tenant {
		if s := current.Load(); s != nil {
			if all, ok := (*s).(interface{ All() []*engine.Tenant }); ok {
				return all.All()
			}
		}
		return nil
	}
}

// previousKeys decodes ENGINE_PREVIOUS_SIGNING_KEYS: the keys the engine signed with before a
// rotation, newest first, comma-separated base64, so that the record sealed and signed under
// them stays readable and verifiable.
func previousKeys(list string) ([][]byte, error) {
	var keys [][]byte
	for i, b64 := range strings.Split(list, ",") {
		if strings.TrimSpace(b64) == "" {
			continue
		}
		key, _, err := signingKey(b64)
		if err != nil {
			return nil, fmt.Errorf("ENGINE_PREVIOUS_SIGNING_KEYS, key %d: %w", i+1, err)
		}
		keys = append(keys, key)
	}
	return keys, nil
}
