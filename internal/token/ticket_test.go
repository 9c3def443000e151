package token

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTickets(t *testing.T) {
	tickets, err := NewTickets([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 500_000_000, time.UTC)
	c := &TicketClaims{Tenant: "pk_demo", Environment: "production", UserToken: "tok", RequestID: "prod-1",
		Metadata: map[string]any{"app": "<web>"}}
	ticket, exp, err := tickets.Issue(c, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(TicketTTL).Truncate(time.Second); !exp.Equal(want) || !strings.HasPrefix(ticket, TicketPrefix) {
		t.Fatalf("Issue = %q expiring %v, want %s… expiring %v", ticket, exp, TicketPrefix, want)
	}
	got, err := tickets.Open(ticket)
	if err != nil || got.ID == "" || got.ID != c.ID || got.UserToken != "tok" || got.Metadata["app"] != "<web>" {
		t.Fatalf("Open = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		at      time.Time
		expired bool
	}{{now, false}, {exp.Add(-time.Nanosecond), false}, {exp, true}} {
		if e := got.Expired(tc.at); e != tc.expired {
			t.Errorf("Expired(%v) = %v, want %v", tc.at, e, tc.expired)
		}
	}
	if key, until := got.Spent(); key != "stream-ticket:"+c.ID || !until.Equal(exp.Add(TicketTTL)) {
		t.Errorf("Spent = %q until %v", key, until)
	}
	if again, _, _ := tickets.Issue(&TicketClaims{Tenant: "pk_demo", UserToken: "tok"}, now); again == ticket {
		t.Error("two tickets are the same")
	}
	for _, bad := range []string{"", "st1_", ticket[:len(ticket)-1], "st2_" + ticket[4:]} {
		if _, err := tickets.Open(bad); !errors.Is(err, ErrTicket) {
			t.Errorf("Open(%q) = %v, want ErrTicket", bad, err)
		}
	}
	large := &TicketClaims{Tenant: "pk_demo", UserToken: strings.Repeat("t", MaxTicket)}
	if _, _, err := tickets.Issue(large, now); !errors.Is(err, ErrTicketTooLarge) {
		t.Errorf("Issue of a large caller = %v, want ErrTicketTooLarge", err)
	}
}
