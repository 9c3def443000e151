package demobank

import "net/http"

type balanceResponse struct {
	Account   string  `json:"account"`
	Name      string  `json:"name"`
	Currency  string  `json:"currency"`
	Balance   float64 `json:"balance"`
	Formatted string  `json:"formatted"`
	Change    string  `json:"change"`
	// ChangeAmount is the change alone, for a client to say "this month" in its own language.
	ChangeAmount string `json:"change_amount"`
}

// handleBalance serves GET /balance?account=checking|savings (default checking).
func (b *Bank) handleBalance(w http.ResponseWriter, r *http.Request) {
	key, ok := authorize(w, r)
	if !ok {
		return
	}
	q, err := readQuery(r, "account")
	if err != nil {
		writeInvalid(w, "%v", err)
		return
	}
	id := q["account"]
	if id == "" {
		id = "checking"
	}
	if id != "checking" && id != "savings" {
		writeInvalid(w, "account must be checking or savings")
		return
	}

	var a account
	if !b.withUser(w, key, func(u *user) { a = *u.account(id) }) {
		return
	}

	writeJSON(w, http.StatusOK, balanceResponse{
		Account:      a.id,
		Name:         a.name,
		Currency:     "USD",
		Balance:      a.balance.dollars(),
		Formatted:    a.balance.String(),
		Change:       a.change.signed() + " this month",
		ChangeAmount: a.change.signed(),
	})
}
