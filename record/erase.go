package record

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
)

// Erase destroys a user's data key (crypto-shredding): what they said and were told becomes
// unreadable, in the store and in every backup of it, while every chain and checkpoint still
// verifies (entries commit to the sealed bytes' hash, not to the words). The evidence of their
// actions stays, under the tenant's key, as a bank must keep payment records (GDPR art.
// 17(3)(b)). ErrLegalHold when the user is held; erasing a user with no record, or erased,
// is nil. Other recorders sharing the store stop using the key within Options.KeyCacheTTL.
func (r *Recorder) Erase(ctx context.Context, tenant, user string) error {
	err := r.store.EraseKey(ctx, tenant, user, microseconds(r.now()))
	r.forget(tenant, user)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case errors.Is(err, ErrLegalHold):
		return fmt.Errorf("record: erasing tenant %s's user: %w", tenant, ErrLegalHold)
	case err != nil:
		return fmt.Errorf("record: erasing: %w", err)
	}
	return nil
}

// Hold puts a user under legal hold: their data key cannot be erased nor their conversations
// pruned until Release.
func (r *Recorder) Hold(ctx context.Context, tenant, user string) error {
	if err := r.store.Hold(ctx, tenant, user, true); err != nil {
		return fmt.Errorf("record: holding: %w", err)
	}
	return nil
}

// Release ends a user's legal hold.
func (r *Recorder) Release(ctx context.Context, tenant, user string) error {
	if err := r.store.Hold(ctx, tenant, user, false); err != nil {
		return fmt.Errorf("record: releasing a hold: %w", err)
	}
	return nil
}

// PublicKeys are the checkpoint public keys of the recorder's key and of its previous keys,
// the current first: what Verify needs.
func (r *Recorder) PublicKeys() []ed25519.PublicKey { return r.keys.publicKeys() }
