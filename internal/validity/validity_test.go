package validity

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

type value struct{ n int }

func TestCheckOncePerPointer(t *testing.T) {
	var c Cache[value]
	calls := 0
	bad := errors.New("n: is zero")
	check := func(v *value) error {
		calls++
		if v.n == 0 {
			return bad
		}
		return nil
	}
	good, broken := &value{n: 1}, &value{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := c.Check(good, check); err != nil {
				t.Error(err)
			}
			if err := c.Check(broken, check); !errors.Is(err, bad) {
				t.Errorf("broken: %v", err)
			}
		})
	}
	wg.Wait()
	if calls != 2 {
		t.Fatalf("check ran %d times for two values, want 2", calls)
	}
}

func TestEntriesGoWithTheirValues(t *testing.T) {
	var c Cache[value]
	for i := range 1000 {
		c.Check(&value{n: i}, func(*value) error { return nil })
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		n := 0
		c.m.Range(func(any, any) bool { n++; return true })
		if n < 100 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 1000 entries left after their values were collected", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkCheck is the cost on the hot path: a value already checked.
func BenchmarkCheck(b *testing.B) {
	var c Cache[value]
	v := &value{n: 1}
	check := func(*value) error { return nil }
	c.Check(v, check)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Check(v, check)
		}
	})
}
