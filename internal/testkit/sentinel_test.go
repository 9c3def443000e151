package testkit

import (
	"testing"
	"time"
)

// TestRedisFailoverTwice: the deployment fails over, takes its old primary back as a replica,
// and fails over again.
func TestRedisFailoverTwice(t *testing.T) {
	f := StartRedisFailoverT(t)
	for i := range 2 {
		old := f.Primary.Addr
		took, err := f.Failover(t.Context())
		if err != nil {
			t.Fatalf("failover %d: %v\n%s", i+1, err, f.sentinelLines())
		}
		if f.Primary.Addr == old || f.Replica.Addr != old {
			t.Fatalf("failover %d: primary %s, replica %s, the old primary %s", i+1, f.Primary.Addr, f.Replica.Addr, old)
		}
		t.Logf("failover %d: promoted %v after the kill", i+1, took.Round(time.Millisecond))
	}
}
