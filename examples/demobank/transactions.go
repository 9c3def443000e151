package demobank

import (
	"net/http"
	"strconv"
)

// Bounds of GET /transactions?limit=.
const (
	defaultLimit = 5
	maxLimit     = 20
)

type transactionJSON struct {
	ID        string  `json:"id"`
	Date      string  `json:"date"`
	Merchant  string  `json:"merchant"`
	Category  string  `json:"category"`
	Amount    float64 `json:"amount"`
	Formatted string  `json:"formatted"` // with its sign: "-$4.50", "+$2,150.00"
	Memo      string  `json:"memo,omitempty"`
}

type transactionsResponse struct {
	Transactions []transactionJSON `json:"transactions"`
}

// handleTransactions serves GET /transactions?limit=1..20 (default 5), newest first.
func (b *Bank) handleTransactions(w http.ResponseWriter, r *http.Request) {
	key, ok := authorize(w, r)
	if !ok {
		return
	}
	q, err := readQuery(r, "limit")
	if err != nil {
		writeInvalid(w, "%v", err)
		return
	}
	limit := defaultLimit
	if s, ok := q["limit"]; ok {
		limit, err = strconv.Atoi(s)
		if err != nil || limit < 1 || limit > maxLimit {
			writeInvalid(w, "limit must be an integer from 1 to %d", maxLimit)
			return
		}
	}

	var out transactionsResponse
	ok = b.withUser(w, key, func(u *user) {
		txs := u.transactions[:min(limit, len(u.transactions))]
		out.Transactions = make([]transactionJSON, len(txs))
		for i, t := range txs {
			out.Transactions[i] = transactionJSON{
				ID:        t.id,
				Date:      t.date.Format("2006-01-02"),
				Merchant:  t.merchant,
				Category:  t.category,
				Amount:    t.amount.dollars(),
				Formatted: t.amount.signed(),
				Memo:      t.memo,
			}
		}
	})
	if !ok {
		return
	}

	writeJSON(w, http.StatusOK, out)
}
