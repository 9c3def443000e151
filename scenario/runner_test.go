package scenario_test

import (
	"os"
	"strings"
	"testing"
)

// The scenario of docs/testing-tenants.md, written from the docs alone.
const transferToAlex = `name: transfer to Alex
tenant: pk_demo
user: demo-user
turns:
  - say: send 20 dollars to Alex
    expect:
      widgets: [confirm]
      confirm: {amount: AMOUNT, currency: USD, payee: Alex}
      speech_contains: ["Alex"]
`

func TestTransferToAlex(t *testing.T) {
	d := newDemo(t)
	r := d.runner(t, nil)
	rep := runFile(t, r, write(t, "alex.yaml", strings.Replace(transferToAlex, "AMOUNT", "21.00", 1)))
	res := rep.Results[0]
	res.Details()
	os.Stdout.WriteString(res.Details())
	rep.WriteSummary(os.Stdout)
}
