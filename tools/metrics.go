package tools

import (
	"sort"
	"sync"
	"time"
)

// Metrics counts calls per tool and keeps a window of recent latencies for
// percentiles. It is safe for concurrent use.
type Metrics struct {
	mu    sync.Mutex
	tools map[string]*toolStats
}

const latencyWindow = 2048

type toolStats struct {
	total, success, errors, rejected, cancelled int
	sum                                         time.Duration
	recent                                      []time.Duration // ring of the last latencyWindow
	next                                        int
}

// NewMetrics returns empty metrics.
func NewMetrics() *Metrics { return &Metrics{tools: map[string]*toolStats{}} }

// Record counts one finished call.
func (m *Metrics) Record(tool string, status Status, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.tools[tool]
	if s == nil {
		s = &toolStats{}
		m.tools[tool] = s
	}
	s.total++
	s.sum += d
	switch status {
	case StatusSuccess:
		s.success++
	case StatusError:
		s.errors++
	case StatusRejected:
		s.rejected++
	case StatusCancelled:
		s.cancelled++
	}
	if len(s.recent) < latencyWindow {
		s.recent = append(s.recent, d)
	} else {
		s.recent[s.next] = d
		s.next = (s.next + 1) % latencyWindow
	}
}

// ToolMetrics is one entry of tool/metrics.
type ToolMetrics struct {
	Name       string  `json:"name"`
	TotalCalls int     `json:"totalCalls"`
	Success    int     `json:"success"`
	Error      int     `json:"error"`
	Rejected   int     `json:"rejected"`
	Cancelled  int     `json:"cancelled"`
	AvgMs      float64 `json:"avgMs"`
	P50Ms      float64 `json:"p50Ms"`
	P95Ms      float64 `json:"p95Ms"`
}

// Snapshot returns the metrics of every tool called so far, by name.
func (m *Metrics) Snapshot() []ToolMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ToolMetrics, 0, len(m.tools))
	for name, s := range m.tools {
		lat := append([]time.Duration(nil), s.recent...)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		out = append(out, ToolMetrics{
			Name: name, TotalCalls: s.total, Success: s.success, Error: s.errors,
			Rejected: s.rejected, Cancelled: s.cancelled,
			AvgMs: ms(s.sum / time.Duration(s.total)),
			P50Ms: ms(percentile(lat, 50)), P95Ms: ms(percentile(lat, 95)),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
