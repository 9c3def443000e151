package demobank

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Bounds of POST /transfers.
const (
	maxBodyBytes               = 64 << 10
	maxTransfer          cents = 1000000
	maxIdempotencyKeyLen       = 255
)

// transferRequest is the body of POST /transfers. Pointers tell a missing field from a zero.
type transferRequest struct {
	Amount   *float64 `json:"amount"`
	To       *string  `json:"to"`
	Currency *string  `json:"currency"`
}

// transfer is a validated transfer request. Comparing two tells whether a request reuses an
// idempotency key for something else.
type transfer struct {
	amount   float64
	to       string // lower case: payees match whatever the case
	currency string
}

type transferResponse struct {
	ID               string  `json:"id"`
	Status           string  `json:"status"`
	Amount           float64 `json:"amount"`
	To               string  `json:"to"`
	FormattedAmount  string  `json:"formatted_amount"`
	BalanceFormatted string  `json:"balance_formatted"`
}

// idempotentResult is the first answer to an idempotency key, given again to every retry.
type idempotentResult struct {
	request transfer
	status  int
	body    []byte
}

// handleTransfer serves POST /transfers: it sends money from checking to a payee.
func (b *Bank) handleTransfer(w http.ResponseWriter, r *http.Request) {
	key, ok := authorize(w, r)
	if !ok {
		return
	}
	idemKey := r.Header.Get("Idempotency-Key")
	if _, set := r.Header["Idempotency-Key"]; set && (idemKey == "" || len(idemKey) > maxIdempotencyKeyLen) {
		writeInvalid(w, "Idempotency-Key must be 1 to %d characters", maxIdempotencyKeyLen)
		return
	}
	if _, err := readQuery(r); err != nil {
		writeInvalid(w, "%v", err)
		return
	}
	req, err := decodeTransfer(w, r)
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", fmt.Sprintf("the body exceeds %d bytes", maxBodyBytes))
			return
		}
		writeInvalid(w, "%v", err)
		return
	}

	status, body, replayed := b.transferOnce(key, idemKey, r.Header.Get("Engine-Device-Key"), req)
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeBody(w, status, body)
}

// transferOnce runs the transfer req for the user of key, unless idemKey (if set) already has
// an answer: then it returns that answer again, or a refusal when req is not the transfer the
// key was first used for.
func (b *Bank) transferOnce(key userKey, idemKey, device string, req transfer) (status int, body []byte, replayed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.user(key)
	if prev, ok := u.idempotent[idemKey]; ok {
		if prev.request != req {
			status, body = refusal("idempotency_key_reused", "this Idempotency-Key was used for a different transfer")
			return status, body, false
		}
		return prev.status, prev.body, true
	}
	// A transfer the device proved names the key that signed it: the first one a user shows is
	// enrolled, and any other is refused from then on, as a bank that enrolled its customers'
	// devices would (a real one also checks the proof's signature with the enrolled key).
	if device != "" {
		switch {
		case u.device == "":
			u.device = device
		case u.device != device:
			status, body = refusal("device_not_enrolled", "this device is not the one enrolled for your account")
			return status, body, false
		}
	}
	status, body = b.execute(u, req)
	if idemKey != "" {
		u.remember(idemKey, &idempotentResult{request: req, status: status, body: body})
	}
	return status, body, false
}

// decodeTransfer reads and validates the body of a transfer request. The amount's range and
// the payee are checked later, as refusals of the bank rather than malformed requests.
func decodeTransfer(w http.ResponseWriter, r *http.Request) (transfer, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	var req transferRequest
	err := dec.Decode(&req)
	if err == nil {
		// One JSON value, and nothing after it.
		if err = dec.Decode(&struct{}{}); errors.Is(err, io.EOF) {
			err = nil
		} else if err == nil {
			err = errors.New("more than one JSON value")
		}
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
	case errors.As(err, new(*http.MaxBytesError)):
		return transfer{}, err
	case errors.Is(err, io.EOF):
		return transfer{}, errors.New("the body is empty")
	case errors.As(err, &typeErr) && typeErr.Field == "amount":
		return transfer{}, errors.New("amount must be a number")
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return transfer{}, fmt.Errorf("%s must be a string", typeErr.Field)
	default:
		return transfer{}, fmt.Errorf("the body is not a transfer: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	switch {
	case req.Amount == nil:
		return transfer{}, errors.New("amount is required")
	case req.To == nil || strings.TrimSpace(*req.To) == "":
		return transfer{}, errors.New("to is required")
	case req.Currency != nil && *req.Currency != "USD":
		return transfer{}, errors.New("currency must be USD")
	}
	return transfer{amount: *req.Amount, to: strings.ToLower(strings.TrimSpace(*req.To)), currency: "USD"}, nil
}

// execute runs a transfer for u and returns the answer. b.mu must be held.
func (b *Bank) execute(u *user, t transfer) (status int, body []byte) {
	amount, exact := dollarsToCents(t.amount)
	switch {
	case t.amount <= 0:
		return refusal("invalid_amount", "the amount must be more than $0.00")
	case t.amount > maxTransfer.dollars():
		return refusal("invalid_amount", "the amount must be at most "+maxTransfer.String())
	case !exact:
		return refusal("invalid_amount", "the amount has more than two decimals")
	}
	payee := ""
	for _, p := range u.payees {
		if strings.EqualFold(p, t.to) {
			payee = p
		}
	}
	if payee == "" {
		return refusal("unknown_payee", "the payee is not one of "+strings.Join(u.payees, ", "))
	}
	if amount > u.checking.balance {
		return refusal("insufficient_funds", "checking holds "+u.checking.balance.String())
	}

	u.checking.balance -= amount
	u.checking.change -= amount
	u.transfers++
	u.record(b.now(), "Transfer to "+payee, "Transfer", -amount)
	body, _ = json.Marshal(transferResponse{
		ID:               fmt.Sprintf("tr_%d", u.transfers),
		Status:           "completed",
		Amount:           amount.dollars(),
		To:               payee,
		FormattedAmount:  amount.String(),
		BalanceFormatted: u.checking.balance.String(),
	})
	return http.StatusCreated, body
}

// refusal is the 422 answer of a transfer the bank declined.
func refusal(code, message string) (int, []byte) {
	body, _ := json.Marshal(errorBody{Error: code, Message: message})
	return http.StatusUnprocessableEntity, body
}
