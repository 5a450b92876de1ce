package initializer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// reconfigRetryInterval paces the retries of a refused membership change. The refusals waited out here
// are checks etcd makes before it proposes anything ("unhealthy cluster", "not enough started members"),
// or a read of the member list (a learner is not asked for while another one is listed, rejoinAsLearner),
// cheap to ask again, and the change goes through the moment the refusal's cause passed: a scale-up's next
// member is added as a learner right after the one before was promoted.
const reconfigRetryInterval = 250 * time.Millisecond

// retryReconfig runs a membership change until it succeeds or QuorumWait passes. etcd's strict
// reconfiguration check rejects changes for a while after members (re)connect ("unhealthy cluster",
// "not enough started members") and refuses a second learner until the first is promoted; both pass
// by themselves, so they are waited out instead of failing the initialization. A reason is logged when it
// changes.
func (i *Initializer) retryReconfig(ctx context.Context, what string, op func(ctx context.Context) error) error {
	deadline := time.Now().Add(i.opts.QuorumWait)
	var lastReason string
	for {
		octx, cancel := context.WithTimeout(ctx, i.opts.ProbeTimeout)
		err := op(octx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %w", what, err)
		}
		if reason := err.Error(); reason != lastReason {
			i.log.Info("Membership change refused for now, retrying", "change", what, "reason", reason)
			lastReason = reason
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, errors.Join(ctx.Err(), err))
		case <-time.After(reconfigRetryInterval):
		}
	}
}

// memberGone treats removing a member that is no longer there (an earlier attempt removed it) as done.
func memberGone(err error) error {
	if errors.Is(err, rpctypes.ErrMemberNotFound) || errors.Is(err, rpctypes.ErrGRPCMemberNotFound) {
		return nil
	}
	return err
}
