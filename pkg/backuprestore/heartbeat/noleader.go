package heartbeat

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// statusTimeout bounds one status request of the no-leader watch: a member that does not answer must
// not hold up the beat.
const statusTimeout = 2 * time.Second

// NoLeaderWatch tells, at every beat, whether this member sees an etcd leader, and remembers since when it
// has not (podwire.NoLeaderReport). It reports only what it observed positively:
//   - while the local etcd runs: its own status names no leader (memberData true);
//   - while the local etcd does not run: the data directory holds no member data AND at least one other
//     member answered AND none of them names a leader (memberData false) — the state of a member whose
//     data was lost and who waits for a quorate cluster to rejoin;
//
// anything else (a status that fails, nobody answering, data on disk beside a stopped etcd) reports
// nothing and starts the time over: druid must not read silence or a restart as a lost quorum.
type NoLeaderWatch struct {
	// MemberData tells whether the member's data directory holds member data (HasMemberData).
	MemberData func() bool
	// Peers is a client to the other members' endpoints; each is asked on its own.
	Peers *clientv3.Client

	mu         sync.Mutex
	since      time.Time
	memberData bool
}

// WithLocalEtcd is the report (the annotation's value, "" for none) of a member whose etcd answers at
// endpoint.
func (w *NoLeaderWatch) WithLocalEtcd(ctx context.Context, cli *clientv3.Client, endpoint string, now time.Time) string {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	status, err := cli.Status(ctx, endpoint)
	if err != nil || status.Leader != 0 {
		return w.reset()
	}
	return w.observed(now, true)
}

// WithoutLocalEtcd is the report ("" for none) of a member whose etcd does not answer.
func (w *NoLeaderWatch) WithoutLocalEtcd(ctx context.Context, now time.Time) string {
	if w.MemberData == nil || w.Peers == nil || w.MemberData() {
		return w.reset()
	}
	answered, leader := false, false
	for _, endpoint := range w.Peers.Endpoints() {
		statusCtx, cancel := context.WithTimeout(ctx, statusTimeout)
		status, err := w.Peers.Status(statusCtx, endpoint)
		cancel()
		if err != nil {
			continue
		}
		answered = true
		if status.Leader != 0 {
			leader = true
		}
	}
	if !answered || leader {
		return w.reset()
	}
	return w.observed(now, false)
}

func (w *NoLeaderWatch) reset() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.since = time.Time{}
	return ""
}

// observed records one observation of no leader; a change of memberData starts the time over.
func (w *NoLeaderWatch) observed(now time.Time, memberData bool) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() || w.memberData != memberData || now.Before(w.since) {
		w.since, w.memberData = now, memberData
	}
	return podwire.NoLeaderReport{Since: w.since.UTC(), ObservedAt: now.UTC(), MemberData: memberData}.Encode()
}

// HasMemberData returns a check whether dataDir holds member data (etcd's member directory). A directory
// that cannot be read counts as holding data: only a member directory known to be absent is reported
// as lost.
func HasMemberData(dataDir string) func() bool {
	return func() bool {
		_, err := os.Stat(etcddata.MemberDir(dataDir))
		return !errors.Is(err, fs.ErrNotExist)
	}
}
