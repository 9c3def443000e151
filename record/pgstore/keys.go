package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/convengine/engine/record"
	"github.com/jackc/pgx/v5"
)

const keyColumns = "tenant, user_id, key_id, wrapped, created_at, erased_at, legal_hold"

// Key returns a user's data key: record.ErrNotFound when none was made, record.ErrErased
// (with the row) once erased.
func (s *Store) Key(ctx context.Context, tenant, user string) (record.DataKey, error) {
	if err := s.check(); err != nil {
		return record.DataKey{}, err
	}
	k, err := s.key(ctx, tenant, user)
	switch {
	case err != nil:
		return record.DataKey{}, err
	case !k.ErasedAt.IsZero():
		return k, fmt.Errorf("data key of %s/%s: %w", tenant, user, record.ErrErased)
	case k.Wrapped == nil: // a hold alone
		return record.DataKey{}, fmt.Errorf("data key of %s/%s: %w", tenant, user, record.ErrNotFound)
	}
	return k, nil
}

// PutKey stores k unless the user has a live key, and returns the key that is stored.
func (s *Store) PutKey(ctx context.Context, k record.DataKey) (record.DataKey, error) {
	if err := s.check(); err != nil {
		return record.DataKey{}, err
	}
	// A live key wins; a row without one (erased, or a hold alone) takes k and keeps its hold.
	rows, _ := s.pool.Query(ctx, `INSERT INTO record_keys AS k (tenant, user_id, key_id, wrapped, created_at, legal_hold)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (tenant, user_id) DO UPDATE SET key_id = excluded.key_id, wrapped = excluded.wrapped,
			created_at = excluded.created_at, erased_at = NULL
		WHERE k.wrapped IS NULL
		RETURNING `+keyColumns, k.Tenant, k.User, k.KeyID, k.Wrapped, k.CreatedAt, k.Hold)
	stored, err := pgx.CollectExactlyOneRow(rows, scanKey)
	if errors.Is(err, pgx.ErrNoRows) { // another's live key, committed: the conflict waited for it
		stored, err = s.key(ctx, k.Tenant, k.User)
	}
	if err != nil {
		return record.DataKey{}, wrap(fmt.Sprintf("storing the data key of %s/%s", k.Tenant, k.User), err)
	}
	return stored, nil
}

// EraseKey destroys a user's data key, unless the user is held.
func (s *Store) EraseKey(ctx context.Context, tenant, user string, at time.Time) error {
	if err := s.check(); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, "SELECT "+keyColumns+" FROM record_keys WHERE tenant = $1 AND user_id = $2 FOR UPDATE", tenant, user)
		k, err := pgx.CollectExactlyOneRow(rows, scanKey)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return record.ErrNotFound
		case err != nil:
			return err
		case k.Hold:
			return record.ErrLegalHold
		case !k.ErasedAt.IsZero():
			return nil
		case k.Wrapped == nil:
			return record.ErrNotFound
		}
		_, err = tx.Exec(ctx, "UPDATE record_keys SET wrapped = NULL, erased_at = $3 WHERE tenant = $1 AND user_id = $2", tenant, user, at)
		return err
	})
	return wrap(fmt.Sprintf("erasing the data key of %s/%s", tenant, user), err)
}

// Hold sets or releases a user's legal hold, making the user's row when there is none.
func (s *Store) Hold(ctx context.Context, tenant, user string, hold bool) error {
	if err := s.check(); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO record_keys AS k (tenant, user_id, legal_hold) VALUES ($1, $2, $3)
		ON CONFLICT (tenant, user_id) DO UPDATE SET legal_hold = excluded.legal_hold`, tenant, user, hold)
	return wrap(fmt.Sprintf("holding %s/%s", tenant, user), err)
}

// key reads a user's row as it is.
func (s *Store) key(ctx context.Context, tenant, user string) (record.DataKey, error) {
	rows, _ := s.pool.Query(ctx, "SELECT "+keyColumns+" FROM record_keys WHERE tenant = $1 AND user_id = $2", tenant, user)
	k, err := pgx.CollectExactlyOneRow(rows, scanKey)
	if errors.Is(err, pgx.ErrNoRows) {
		return k, fmt.Errorf("data key of %s/%s: %w", tenant, user, record.ErrNotFound)
	}
	return k, wrap(fmt.Sprintf("reading the data key of %s/%s", tenant, user), err)
}

func scanKey(r pgx.CollectableRow) (record.DataKey, error) {
	var k record.DataKey
	var created, erased *time.Time
	err := r.Scan(&k.Tenant, &k.User, &k.KeyID, &k.Wrapped, &created, &erased, &k.Hold)
	if created != nil {
		k.CreatedAt = created.UTC()
	}
	if erased != nil {
		k.ErasedAt = erased.UTC()
	}
	return k, err
}
