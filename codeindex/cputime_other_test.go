//go:build !unix

package codeindex

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
