package demobank

import "testing"

func TestCentsString(t *testing.T) {
	tests := []struct {
		c            cents
		want, signed string
	}{
		{0, "$0.00", "+$0.00"},
		{5, "$0.05", "+$0.05"},
		{-450, "-$4.50", "-$4.50"},
		{99999, "$999.99", "+$999.99"},
		{100000, "$1,000.00", "+$1,000.00"},
		{123456, "$1,234.56", "+$1,234.56"},
		{12000, "$120.00", "+$120.00"},
		{-123456789, "-$1,234,567.89", "-$1,234,567.89"},
		{100000000000, "$1,000,000,000.00", "+$1,000,000,000.00"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.c.String(); got != tt.want {
				t.Errorf("cents(%d).String() = %q, want %q", tt.c, got, tt.want)
			}
			if got := tt.c.signed(); got != tt.signed {
				t.Errorf("cents(%d).signed() = %q, want %q", tt.c, got, tt.signed)
			}
		})
	}
}

func TestDollarsToCents(t *testing.T) {
	tests := []struct {
		d    float64
		want cents
		ok   bool
	}{
		{20, 2000, true},
		{0.1, 10, true},
		{19.99, 1999, true},
		{1234.56, 123456, true},
		{-4.5, -450, true},
		{0.001, 0, false},
		{10.005, 0, false},
	}
	for _, tt := range tests {
		got, ok := dollarsToCents(tt.d)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("dollarsToCents(%v) = %d, %v; want %d, %v", tt.d, got, ok, tt.want, tt.ok)
		}
	}
}
