package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's steps, named NNN_what.sql and applied in NNN order; a step once
// released is never edited, only followed.
//
//go:embed migrations/*.sql
var migrations embed.FS

// migrateLock is the advisory lock key under which the schema is migrated.
const migrateLock = 0x7265636f72646d67 // "recordmg"

// migrate applies the steps the database lacks, in one transaction under an advisory lock:
// replicas starting together wait for the first, then find nothing to do.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	steps, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	slices.Sort(steps)
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS record_migrations (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var applied int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM record_migrations").Scan(&applied); err != nil {
			return err
		}
		for _, p := range steps {
			name := strings.TrimPrefix(p, "migrations/")
			number, _, _ := strings.Cut(name, "_")
			version, err := strconv.Atoi(number)
			if err != nil {
				return fmt.Errorf("migration %s: no version number", name)
			}
			if version <= applied {
				continue
			}
			sql, err := migrations.ReadFile(p)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return fmt.Errorf("migration %s: %w", name, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO record_migrations (version, name) VALUES ($1, $2)", version, name); err != nil {
				return err
			}
		}
		return nil
	})
	return wrap("pgstore: migrating the schema", err)
}
