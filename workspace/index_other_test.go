//go:build !unix

package workspace

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
