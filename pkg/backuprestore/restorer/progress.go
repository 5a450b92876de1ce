package restorer

import (
	"time"

	"github.com/go-logr/logr"
)

// progress logs the replay's position, percentage and estimated time left at an interval, so that an
// operator watching a long restore knows it is moving and when it will be done.
type progress struct {
	log        logr.Logger
	base, last int64
	interval   time.Duration
	start      time.Time
	next       time.Time
}

func newProgress(log logr.Logger, base, last int64, interval time.Duration) *progress {
	now := time.Now()
	return &progress{log: log, base: base, last: last, interval: interval, start: now, next: now.Add(interval)}
}

// applied reports that revision rev is applied.
func (p *progress) applied(rev int64) {
	now := time.Now()
	if now.Before(p.next) {
		return
	}
	p.next = now.Add(p.interval)
	done, total := rev-p.base, p.last-p.base
	if total <= 0 || done <= 0 {
		return
	}
	elapsed := now.Sub(p.start)
	eta := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
	p.log.Info("Applying delta snapshots", "revision", rev, "lastRevision", p.last,
		"percent", 100*done/total, "eta", eta.Round(time.Second).String())
}
