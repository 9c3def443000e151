package telephony_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/telephony"
)

// Keys pressed once armed count, '#' ends, '*' cancels, a pause ends, max digits end, and keys
// pressed while nothing asks are dropped; the digits never print.
func TestKeypad(t *testing.T) {
	ctx := context.Background()
	var k telephony.Keypad
	k.Press('9') // not armed: dropped
	k.Arm()
	for _, key := range []byte("12x3#45") {
		k.Press(key)
	}
	d, end, err := k.Read(ctx, 8, time.Second, time.Second)
	if err != nil || d.Reveal() != "123" || end != telephony.EndPound {
		t.Fatalf("%q %v %v", d.Reveal(), end, err)
	}
	if s := fmt.Sprint(d) + fmt.Sprintf("%v %+v %#v", d, d, d); strings.Contains(s, "123") {
		t.Errorf("the digits print: %s", s)
	}
	k.Press('4') // read over: dropped
	go func() {
		time.Sleep(10 * time.Millisecond)
		k.Press('5')
		k.Press('6')
	}()
	if d, end, _ := k.Read(ctx, 2, time.Second, time.Second); d.Reveal() != "56" || end != telephony.EndFull {
		t.Errorf("%q %v", d.Reveal(), end)
	}
	if d, end, _ := k.Read(ctx, 8, 20*time.Millisecond, 20*time.Millisecond); d != "" || end != telephony.EndTimeout {
		t.Errorf("%q %v", d.Reveal(), end)
	}
	k.Arm()
	k.Press('1')
	k.Press('*')
	if d, end, _ := k.Read(ctx, 8, time.Second, time.Second); d != "" || end != telephony.EndStar {
		t.Errorf("%q %v", d.Reveal(), end)
	}
}

// A tenant's section is read strictly: a token written in the file is refused, as are numbers
// that are not E.164 and a number two tenants claim.
func TestTenantConfig(t *testing.T) {
	tenant := func(key, section string) *engine.Tenant {
		return &engine.Tenant{Key: key, Telephony: []byte(section)}
	}
	for _, bad := range []string{
		`{"numbers":["+15550100"],"twilio":{"auth_token_env":"X","auth_token":"secret"}}`,
		`{"numbers":["5550100"]}`,
		`{"numbers":[]}`,
		`{"numbers":["+15550100"],"twilio":{"auth_token_env":"lower"}}`,
		`{"numbers":["+15550100"],"transfer_to":"nope"}`,
		`{"numbers":["+15550100"],"sip":{"trunks":["10.0.0.0/33"]}}`,
		`{"numbers":["+15550100"],"sip":{"trunks":["sbc.example"]}}`,
	} {
		if _, err := telephony.TenantConfig(tenant("pk_a", bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	ok := `{"numbers":["+15550100"],"twilio":{"auth_token_env":"ACME_TOKEN"}}`
	d, err := telephony.NewDirectory(tenant("pk_a", ok), &engine.Tenant{Key: "pk_none"})
	if err != nil {
		t.Fatal(err)
	}
	if e, found := d.Lookup("+15550100"); !found || e.Tenant.Key != "pk_a" || d.Len() != 1 {
		t.Errorf("lookup: %+v %v", e, found)
	}
	if err := d.Replace(tenant("pk_a", ok), tenant("pk_b", ok)); err == nil {
		t.Error("a number of two tenants was accepted")
	}
	if _, found := d.Tenant("pk_a"); !found {
		t.Error("a refused replacement lost the directory")
	}
}

// A tenant's SIP trunks admit their addresses and prefixes (IPv4 in IPv6 too), and no other;
// no trunks admit any address.
func TestSIPTrunks(t *testing.T) {
	c, err := telephony.TenantConfig(&engine.Tenant{Key: "pk_a",
		Telephony: []byte(`{"numbers":["+15550100"],"sip":{"trunks":["192.0.2.10","198.51.100.0/28","2001:db8::/32"]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{"192.0.2.10": true, "192.0.2.11": false, "198.51.100.15": true,
		"198.51.100.16": false, "::ffff:192.0.2.10": true, "2001:db8::1": true, "2001:db9::1": false} {
		if got := c.SIP.Allows(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: %v, want %v", addr, got, want)
		}
	}
	var none *telephony.SIP
	if !none.Allows(netip.MustParseAddr("203.0.113.1")) {
		t.Error("no trunks refused an address")
	}
}
