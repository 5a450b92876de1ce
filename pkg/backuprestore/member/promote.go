package member

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// PromoteLearner promotes the learner id to a voting member as soon as etcd allows it. etcd refuses the
// promotion until the learner's log is close enough to the leader's (ErrMemberLearnerNotReady), which is
// the "caught up" condition; other failures (no leader during an election, a timeout) are retried too.
// It returns nil once the member votes, also when it already did.
func PromoteLearner(ctx context.Context, cli *clientv3.Client, id uint64, interval time.Duration, log logr.Logger) error {
	log = log.WithValues("memberID", fmt.Sprintf("%x", id))
	for attempt := 1; ; attempt++ {
		_, err := cli.MemberPromote(ctx, id)
		switch {
		case err == nil:
			log.Info("Learner promoted to a voting member", "attempts", attempt)
			return nil
		case errors.Is(err, rpctypes.ErrMemberNotLearner):
			return nil
		case errors.Is(err, rpctypes.ErrMemberNotFound):
			return fmt.Errorf("promoting learner %x: %w", id, err)
		case errors.Is(err, rpctypes.ErrMemberLearnerNotReady):
			log.V(1).Info("Learner has not caught up yet", "attempt", attempt)
		default:
			log.Info("Promoting the learner failed, retrying", "attempt", attempt, "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("promoting learner %x: %w (last: %v)", id, ctx.Err(), err)
		case <-time.After(interval):
		}
	}
}
