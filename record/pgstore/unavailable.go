package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable says that the database could not be reached or went away: the operation may
// succeed when retried.
var ErrUnavailable = errors.New("pgstore: the database is unavailable")

// wrap prefixes err with what was being done, and marks a database that cannot be reached
// with ErrUnavailable.
func wrap(doing string, err error) error {
	if err == nil {
		return nil
	}
	if unavailable(err) {
		return fmt.Errorf("%s: %w: %w", doing, ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// unavailable says whether err is the database's absence rather than its answer.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller's own deadline: a slow database is as good as none.
		return errors.Is(err, context.DeadlineExceeded)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutting down, crashed, starting up
			return true
		case pgErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.Timeout(err) ||
		pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
