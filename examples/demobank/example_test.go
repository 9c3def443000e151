package demobank_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/convengine/engine/examples/demobank"
)

func Example() {
	bank := demobank.New(nil)
	srv := httptest.NewServer(bank)
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+"/transfers", strings.NewReader(`{"amount":20,"to":"Alex"}`))
	req.Header.Set("X-Token", "user-token")
	req.Header.Set("Idempotency-Key", "confirm-1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))
	fmt.Println(bank.Balance("user-token", "checking"), bank.Transfers("user-token"))
	// Output:
	// 201 {"id":"tr_1","status":"completed","amount":20,"to":"Alex","formatted_amount":"$20.00","balance_formatted":"$1,214.56"}
	// 1214.56 1
}
