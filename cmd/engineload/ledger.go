package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// outcome is what the engine answered an action.
type outcome int

const (
	outcomeExecuted outcome = iota + 1 // a success card
	outcomeDeclined                    // an error card: the bank refused it
	outcomeUnknown                     // no answer, or a problem: it may or may not have run
)

// ledger keeps the outcome of every action a run executed, by end user (one action per user),
// to be checked against the tenant backend's own record.
type ledger struct {
	mu       sync.Mutex
	outcomes map[string]outcome
}

func newLedger() *ledger { return &ledger{outcomes: map[string]outcome{}} }

func (l *ledger) note(token string, o outcome) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.outcomes[token] = o
	l.mu.Unlock()
}

func (l *ledger) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.outcomes)
}

// LedgerCheck compares the actions the engine answered with the transfers the bank made.
type LedgerCheck struct {
	Bank string `json:"bank"`
	// Actions counts the actions executed; Executed those answered with a success card,
	// Declined with an error card, Unknown with no card.
	Actions  int `json:"actions"`
	Executed int `json:"executed"`
	Declined int `json:"declined"`
	Unknown  int `json:"unknown"`
	// Transfers counts the transfers the bank holds for the run's users.
	Transfers int `json:"transfers"`
	// Missing counts actions answered with success that the bank has no transfer for;
	// Duplicated actions the bank ran more than once; Unasked transfers the engine answered
	// no success for (a declined action that ran, or an unknown one).
	Missing    int `json:"missing"`
	Duplicated int `json:"duplicated"`
	Unasked    int `json:"unasked"`
}

// ok says whether every action the engine confirmed ran exactly once and no other ran.
func (c *LedgerCheck) ok() bool {
	return c.Missing == 0 && c.Duplicated == 0 && c.Unasked == 0
}

// check reads, for every user of the run, the transfers in the demo bank's ledger at bank
// (GET /transactions, X-Token naming the user) and compares them with the engine's answers.
func (l *ledger) check(ctx context.Context, hc *http.Client, bank string) (*LedgerCheck, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &LedgerCheck{Bank: bank, Actions: len(l.outcomes)}
	// A new user's account holds seeded transactions, transfers among them: a user the run
	// never used tells how many.
	seeded, err := transfersOf(ctx, hc, bank, "engineload.ledger-probe."+randomID())
	if err != nil {
		return nil, fmt.Errorf("reading the bank's ledger: %w", err)
	}
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for token, o := range l.outcomes {
		switch o {
		case outcomeExecuted:
			c.Executed++
		case outcomeDeclined:
			c.Declined++
		default:
			c.Unknown++
		}
		g.Go(func() error {
			n, err := transfersOf(ctx, hc, bank, token)
			if err != nil {
				return err
			}
			n -= seeded
			mu.Lock()
			defer mu.Unlock()
			c.Transfers += n
			switch {
			case n > 1:
				c.Duplicated++
			case n == 0 && o == outcomeExecuted:
				c.Missing++
			case n == 1 && o != outcomeExecuted:
				c.Unasked++
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("reading the bank's ledger: %w", err)
	}
	return c, nil
}

// transfersOf counts the transfers among a demo bank user's latest transactions (up to 20: a
// run makes one per user).
func randomID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func transfersOf(ctx context.Context, hc *http.Client, bank, token string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(bank, "/")+"/transactions?limit=20", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-Token", token)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /transactions: %s", resp.Status)
	}
	var body struct {
		Transactions []struct {
			Category string `json:"category"`
		} `json:"transactions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("GET /transactions: %w", err)
	}
	n := 0
	for _, t := range body.Transactions {
		if t.Category == "Transfer" {
			n++
		}
	}
	return n, nil
}
