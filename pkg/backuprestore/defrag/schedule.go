package defrag

import (
	"context"
	"fmt"

	"github.com/robfig/cron/v3"
)

// DefaultSchedule is the upstream sidecar's default --defragmentation-schedule.
const DefaultSchedule = "0 0 */3 * *"

// Schedule runs Run on the cron schedule (5 fields) until ctx ends — the end of the leadership term.
// Runs never overlap; a run skipped for an unhealthy cluster waits for the next scheduled time.
func Schedule(ctx context.Context, schedule string, opts Options) error {
	sched, err := cron.ParseStandard(schedule)
	if err != nil {
		return fmt.Errorf("defragmentation schedule %q: %w", schedule, err)
	}
	c := cron.New(cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	c.Schedule(sched, cron.FuncJob(func() {
		if _, err := Run(ctx, opts); err != nil && ctx.Err() == nil {
			opts.Log.Error(err, "Scheduled defragmentation did not complete")
		}
	}))
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
	return nil
}
