//go:build !unix

package testenv

import "time"

// CPUTime is not measured here: it is always 0.
func CPUTime() time.Duration { return 0 }
