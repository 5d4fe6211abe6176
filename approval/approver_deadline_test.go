package approval

import (
	"testing"
	"time"
)

// TestExpireAndStamp: Expire sets the deadline in both spellings and the
// timeout as timeoutMs; Stamp says what is left of expiresAt (whole
// milliseconds, as on the wire) at a later moment, never below zero, and
// leaves a request without a deadline alone.
func TestExpireAndStamp(t *testing.T) {
	now := time.Date(2026, 11, 27, 1, 2, 3, 456789000, time.FixedZone("CET", 3600))
	tests := []struct {
		name    string
		timeout time.Duration
		later   time.Duration // Stamp at now+later
		wantAt  string
		wantDl  string
		wantMs  int64
	}{
		{"as sent", 300 * time.Second, 0, "2026-11-27T00:07:03.456Z", "2026-11-27T00:07:03Z", 299999},
		{"a moment later", 300 * time.Second, 1500 * time.Millisecond, "2026-11-27T00:07:03.456Z", "2026-11-27T00:07:03Z", 298499},
		{"past the deadline", 2 * time.Second, 5 * time.Second, "2026-11-27T00:02:05.456Z", "2026-11-27T00:02:05Z", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Request
			r.Expire(now, tt.timeout)
			r.Stamp(now.Add(tt.later))
			if r.ExpiresAt != tt.wantAt || r.Deadline != tt.wantDl || r.TimeoutSeconds != int(tt.timeout/time.Second) {
				t.Errorf("expiresAt %q deadline %q timeoutSeconds %d", r.ExpiresAt, r.Deadline, r.TimeoutSeconds)
			}
			if r.TimeoutMs == nil || *r.TimeoutMs != tt.wantMs {
				t.Errorf("timeoutMs %v, want %d", deref(r.TimeoutMs), tt.wantMs)
			}
		})
	}
	var none Request
	none.Stamp(now)
	if none.TimeoutMs != nil || none.ExpiresAt != "" {
		t.Errorf("a request without a deadline got %+v", none)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
