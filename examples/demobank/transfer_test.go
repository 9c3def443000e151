package demobank_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestTransfer(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		status int
		want   string // the answer, or its error code for refusals
	}{
		{"ok", `{"amount":20,"to":"Alex"}`, http.StatusCreated,
			`{"id":"tr_1","status":"completed","amount":20,"to":"Alex","formatted_amount":"$20.00","balance_formatted":"$1,214.56"}`},
		{"currency", `{"amount":0.5,"to":"Jordan","currency":"USD"}`, http.StatusCreated,
			`{"id":"tr_1","status":"completed","amount":0.5,"to":"Jordan","formatted_amount":"$0.50","balance_formatted":"$1,234.06"}`},
		{"whole balance", `{"amount":1234.56,"to":"Taylor"}`, http.StatusCreated,
			`{"id":"tr_1","status":"completed","amount":1234.56,"to":"Taylor","formatted_amount":"$1,234.56","balance_formatted":"$0.00"}`},
		{"insufficient funds", `{"amount":1234.57,"to":"Sam"}`, http.StatusUnprocessableEntity, "insufficient_funds"},
		{"unknown payee", `{"amount":20,"to":"Mallory"}`, http.StatusUnprocessableEntity, "unknown_payee"},
		// Payees are ids, matched exactly: no case folding, under which a long s is an s.
		{"payee in lower case", `{"amount":20,"to":"alex"}`, http.StatusUnprocessableEntity, "unknown_payee"},
		{"payee with a long s", `{"amount":20,"to":"ſam"}`, http.StatusUnprocessableEntity, "unknown_payee"},
		{"zero", `{"amount":0,"to":"Alex"}`, http.StatusUnprocessableEntity, "invalid_amount"},
		{"negative", `{"amount":-20,"to":"Alex"}`, http.StatusUnprocessableEntity, "invalid_amount"},
		{"over the maximum", `{"amount":10000.01,"to":"Alex"}`, http.StatusUnprocessableEntity, "invalid_amount"},
		{"huge", `{"amount":1e300,"to":"Alex"}`, http.StatusUnprocessableEntity, "invalid_amount"},
		{"fraction of a cent", `{"amount":1.005,"to":"Alex"}`, http.StatusUnprocessableEntity, "invalid_amount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bank, srv := newServer(t, nil)
			status, got := do(t, srv, request{method: "POST", path: "/transfers", token: "u", body: tt.body})
			if status != tt.status {
				t.Fatalf("status %d %v, want %d", status, got, tt.status)
			}
			if status != http.StatusCreated {
				if got["error"] != tt.want || got["message"] == "" {
					t.Errorf("answer %v, want error %q with a message", got, tt.want)
				}
				if bank.Transfers("u") != 0 || bank.Balance("u", "checking") != 1234.56 {
					t.Errorf("a refused transfer moved money: %d transfers, balance %v", bank.Transfers("u"), bank.Balance("u", "checking"))
				}
				return
			}
			if want := jsonOf(t, tt.want); !reflect.DeepEqual(got, want) {
				t.Errorf("answer\n%v\nwant\n%v", got, want)
			}
			if bank.Transfers("u") != 1 {
				t.Errorf("Transfers = %d, want 1", bank.Transfers("u"))
			}
		})
	}
}

func TestTransferRecordsTransaction(t *testing.T) {
	_, srv := newServer(t, nil)
	do(t, srv, request{method: "POST", path: "/transfers", token: "u", body: `{"amount":20,"to":"Alex"}`})
	_, got := do(t, srv, request{method: "GET", path: "/transactions?limit=2", token: "u"})
	txs := got["transactions"].([]any)
	want := jsonOf(t, `{"id":"tx_9","date":"2026-11-20","merchant":"Transfer to Alex","category":"Transfer","amount":-20,"formatted":"-$20.00"}`)
	if !reflect.DeepEqual(txs[0], want) {
		t.Errorf("newest transaction %v, want %v", txs[0], want)
	}
	if txs[1].(map[string]any)["id"] != "tx_1" {
		t.Errorf("second transaction %v, want the newest seeded one", txs[1])
	}
}

func TestTransferWithoutIdempotencyKey(t *testing.T) {
	bank, srv := newServer(t, nil)
	for range 2 {
		do(t, srv, request{method: "POST", path: "/transfers", token: "u", body: `{"amount":20,"to":"Alex"}`})
	}
	if bank.Transfers("u") != 2 || bank.Balance("u", "checking") != 1194.56 {
		t.Errorf("two posts without a key: %d transfers, balance %v; want 2, 1194.56", bank.Transfers("u"), bank.Balance("u", "checking"))
	}
}

func TestIdempotency(t *testing.T) {
	bank, srv := newServer(t, nil)
	post := func(token, key, body string) (int, []byte) {
		return doRaw(t, srv, request{method: "POST", path: "/transfers", token: token, body: body,
			header: map[string]string{"Idempotency-Key": key}})
	}

	status1, body1 := post("u", "k1", `{"amount":20,"to":"Alex"}`)
	status2, body2 := post("u", "k1", `{"to":"Alex", "amount":20.0}`) // the same transfer, written otherwise
	if status1 != http.StatusCreated || status2 != status1 || !bytes.Equal(body1, body2) {
		t.Errorf("retry answered %d %s, want the first answer %d %s", status2, body2, status1, body1)
	}
	if bank.Transfers("u") != 1 || bank.Balance("u", "checking") != 1214.56 {
		t.Errorf("after a retry: %d transfers, balance %v; want 1, 1214.56", bank.Transfers("u"), bank.Balance("u", "checking"))
	}

	status, body := post("u", "k1", `{"amount":30,"to":"Alex"}`)
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"idempotency_key_reused"`) {
		t.Errorf("same key, other transfer: %d %s, want 422 idempotency_key_reused", status, body)
	}

	// A refusal is the first answer too: retrying it does not try again.
	statusR1, bodyR1 := post("u", "k2", `{"amount":20,"to":"Mallory"}`)
	statusR2, bodyR2 := post("u", "k2", `{"amount":20,"to":"Mallory"}`)
	if statusR1 != http.StatusUnprocessableEntity || statusR2 != statusR1 || !bytes.Equal(bodyR1, bodyR2) {
		t.Errorf("retried refusal: %d %s then %d %s", statusR1, bodyR1, statusR2, bodyR2)
	}

	// Keys belong to a token: another user's k1 is a new transfer.
	if status, body := post("v", "k1", `{"amount":30,"to":"Sam"}`); status != http.StatusCreated {
		t.Errorf("another token reusing k1: %d %s, want 201", status, body)
	}
	if bank.Transfers("u") != 1 || bank.Transfers("v") != 1 {
		t.Errorf("Transfers: u %d, v %d; want 1, 1", bank.Transfers("u"), bank.Transfers("v"))
	}
}

func TestIdempotencyConcurrent(t *testing.T) {
	bank, srv := newServer(t, nil)
	const n = 50
	var wg sync.WaitGroup
	answers := make([]string, n)
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", srv.URL+"/transfers", strings.NewReader(`{"amount":20,"to":"Alex"}`))
			req.Header.Set("X-Token", "u")
			req.Header.Set("Idempotency-Key", "same")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Error(err)
			}
			answers[i] = fmt.Sprintf("%d %s", resp.StatusCode, body)
		})
	}
	wg.Wait()
	for i, a := range answers {
		if a != answers[0] {
			t.Fatalf("answer %d is %s, answer 0 is %s", i, a, answers[0])
		}
	}
	if !strings.HasPrefix(answers[0], "201 ") {
		t.Errorf("answer %s, want 201", answers[0])
	}
	if bank.Transfers("u") != 1 || bank.Balance("u", "checking") != 1214.56 {
		t.Errorf("%d posts with one key: %d transfers, balance %v; want 1, 1214.56", n, bank.Transfers("u"), bank.Balance("u", "checking"))
	}
}

func TestTransferBodyTooLarge(t *testing.T) {
	bank, srv := newServer(t, nil)
	body := `{"amount":20,"to":"Alex` + strings.Repeat(" ", 64<<10) + `"}`
	status, got := do(t, srv, request{method: "POST", path: "/transfers", token: "u", body: body})
	if status != http.StatusRequestEntityTooLarge || got["error"] != "request_too_large" {
		t.Errorf("status %d %v, want 413 request_too_large", status, got)
	}
	if bank.Transfers("u") != 0 {
		t.Errorf("an oversize request transferred money")
	}
}
