package demobank

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
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
	to       string // the payee's id, exactly
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
	if !utf8Body(w, r) {
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		if errors.As(err, new(*http.MaxBytesError)) {
			writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", fmt.Sprintf("the body exceeds %d bytes", maxBodyBytes))
			return
		}
		writeInvalid(w, "the body could not be read")
		return
	}
	req, err := decodeTransfer(raw)
	if err != nil {
		writeInvalid(w, "%v", err)
		return
	}

	var status int
	var body []byte
	var replayed bool
	ok = b.withUser(w, key, func(u *user) {
		status, body, replayed = b.transferOnce(u, idemKey, r.Header, raw, req)
	})
	if !ok {
		return
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeBody(w, status, body)
}

// transferOnce runs the transfer req for u, unless idemKey (if set) already has an answer:
// then it returns that answer again, or a refusal when req is not the transfer the key was
// first used for. A bank that requires device proofs runs it only with one that it verifies
// (verifyProof); a refused proof is not remembered, so that nobody can spend another's key.
// The bank's lock is held.
func (b *Bank) transferOnce(u *user, idemKey string, h http.Header, raw []byte, req transfer) (status int, body []byte, replayed bool) {
	if prev, ok := u.idempotent[idemKey]; ok && idemKey != "" {
		if prev.request != req {
			status, body = refusal("idempotency_key_reused", "This Idempotency-Key was used for a different transfer.")
			return status, body, false
		}
		return prev.status, prev.body, true
	}
	if b.opts.RequireDeviceProof {
		if r := b.verifyProof(u, h, raw, b.now()); r != nil {
			body, _ = json.Marshal(errorBody{Error: r.Code, Message: r.Message})
			return http.StatusForbidden, body, false
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
func decodeTransfer(raw []byte) (transfer, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
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
	return transfer{amount: *req.Amount, to: *req.To, currency: "USD"}, nil
}

// execute runs a transfer for u and returns the answer. b.mu must be held.
func (b *Bank) execute(u *user, t transfer) (status int, body []byte) {
	amount, exact := dollarsToCents(t.amount)
	switch {
	case t.amount <= 0:
		return refusal("invalid_amount", "The amount must be more than $0.00.")
	case t.amount > maxTransfer.dollars():
		return refusal("invalid_amount", "The amount must be at most "+maxTransfer.String()+".")
	case !exact:
		return refusal("invalid_amount", "The amount has more than two decimals.")
	}
	// Payees are matched by their exact id: case folding would let "ſam" (long s) pay Sam.
	payee := ""
	if slices.Contains(u.payees, t.to) {
		payee = t.to
	}
	if payee == "" {
		return refusal("unknown_payee", "The payee is not one of "+strings.Join(u.payees, ", ")+".")
	}
	if amount > u.checking.balance {
		return refusal("insufficient_funds", "Checking holds "+u.checking.balance.String()+".")
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
