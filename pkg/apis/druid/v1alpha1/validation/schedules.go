package validation

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The shortest intervals between two runs of the sidecar's schedules.
//
// MinDefragmentationInterval: a defragmentation blocks the member's reads and writes while bbolt rewrites
// the whole database (minutes near the 8Gi quota, bounded only by spec.etcd.etcdDefragTimeout, 15m by
// default), and the sidecar defragments the members one after another; a schedule that fires more than
// hourly keeps some member blocked much of the time (`@every 1s` defragments without pause). Gardener
// defragments daily or every few days.
//
// MinFullSnapshotInterval: a full snapshot streams the whole database (up to the quota) from the leader to
// the object store; delta snapshots cover the time between two of them. A schedule that fires more than
// hourly loads the leader and the store for no gain in what a restore recovers. Gardener takes one a day,
// the sidecar's own default is hourly.
const (
	MinDefragmentationInterval = time.Hour
	MinFullSnapshotInterval    = time.Hour
)

// scheduleScanWindow is how far validateScheduleInterval follows a schedule: a leap year and a day, so that
// every day of the month and week, the end of every month and February 29 occur at least once.
var (
	scheduleScanStart  = time.Date(2028, time.January, 1, 0, 0, 0, 0, time.UTC)
	scheduleScanWindow = 367 * 24 * time.Hour
)

// validateScheduleInterval refuses a schedule whose runs come closer together than minInterval anywhere in
// scheduleScanWindow. A schedule that does not parse is left to validateSchedule, which names the syntax
// error.
func validateScheduleInterval(schedule *string, minInterval time.Duration, fld *field.Path) field.ErrorList {
	if schedule == nil {
		return nil
	}
	parsed, err := cronParser.Parse(*schedule)
	if err != nil {
		return nil
	}
	if gap, ok := shortestGap(parsed, minInterval); ok && gap < minInterval {
		return field.ErrorList{field.Invalid(fld, *schedule, fmt.Sprintf(
			"runs %s apart; runs must be at least %s apart (e.g. \"0 3 * * *\" for daily at 03:00)", gap, minInterval))}
	}
	return nil
}

// shortestGap is the shortest time between two consecutive runs of s in the scan window, stopping early
// once one is below limit; ok is false when s runs at most once in the window.
func shortestGap(s cron.Schedule, limit time.Duration) (time.Duration, bool) {
	if every, isConstant := s.(cron.ConstantDelaySchedule); isConstant {
		return every.Delay, true
	}
	end := scheduleScanStart.Add(scheduleScanWindow)
	previous := s.Next(scheduleScanStart.Add(-time.Second))
	shortest, found := time.Duration(0), false
	for !previous.IsZero() && previous.Before(end) {
		next := s.Next(previous)
		if next.IsZero() {
			break
		}
		if gap := next.Sub(previous); !found || gap < shortest {
			shortest, found = gap, true
			if shortest < limit {
				break
			}
		}
		previous = next
	}
	return shortest, found
}
