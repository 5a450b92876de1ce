package initializer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
)

// act runs the action of case c.
func (i *Initializer) act(ctx context.Context, c Case, f Facts) (State, error) {
	if !reusesData(c) && i.opts.BeforeChange != nil {
		if err := i.opts.BeforeChange(ctx, c); err != nil {
			return State{}, err
		}
	}
	switch c {
	case CaseBootstrapFirst, CaseBootstrapFollowing:
		return i.bootstrapFresh(c, f)
	case CaseRestartValid, CaseNonQuorateValid:
		return i.reuseData(c)
	case CaseQuorateInvalidData, CaseQuorateInvalidMetadata:
		// The upstream sidecar's restoration of a single member of a multi-member cluster is this
		// rejoin: the member gets its data from the cluster, not from the store.
		start := time.Now()
		st, err := i.rejoinAsLearner(ctx, c, f.Cluster)
		i.opts.Metrics.restored(RestoreSingleMember, start, err)
		return st, err
	case CaseNonQuorateFirstRestore:
		return i.restoreAsFirstMember(ctx, f)
	case CaseNonQuorateFollowingWait:
		return i.waitForQuorumAndJoin(ctx)
	}
	return State{}, fmt.Errorf("no action for %s", c)
}

// reusesData tells the cases in which etcd starts on the data directory as it is, with the member ID it
// holds: nothing is added to the cluster, restored or created (Options.BeforeChange is not asked).
func reusesData(c Case) bool {
	return c == CaseRestartValid || c == CaseNonQuorateValid
}

// bootstrapFresh (cases 1 and 2): etcd creates the member from the template's initial-cluster of all n
// members and state new. Only an owner marker of another Etcd can be in the way; it is moved aside.
func (i *Initializer) bootstrapFresh(c Case, f Facts) (State, error) {
	if !f.Data.OwnerOK {
		if err := i.moveDataAside(f.Data); err != nil {
			return State{}, err
		}
	}
	if err := writeMarker(i.opts.DataDir, i.opts.Owner); err != nil {
		return State{}, err
	}
	return State{Case: c, ClusterState: memberconfig.ClusterStateNew}, nil
}

// reuseData (cases 3 and 6): the data is valid; etcd restarts from it and ignores initial-cluster. Data
// written before owner markers existed is adopted.
func (i *Initializer) reuseData(c Case) (State, error) {
	if err := writeMarker(i.opts.DataDir, i.opts.Owner); err != nil {
		return State{}, err
	}
	return State{Case: c, ClusterState: memberconfig.ClusterStateNew}, nil
}

// moveDataAside moves the data directory aside (never deleting anything), after checking once more
// that no etcd runs on it.
func (i *Initializer) moveDataAside(d DataFacts) error {
	if err := CheckNotInUse(i.opts.DataDir); err != nil {
		return err
	}
	aside, err := moveAside(i.opts.DataDir, time.Now())
	if err != nil {
		return err
	}
	if aside != "" {
		i.log.Info("Moved the data directory aside; it is kept for inspection and listed on the member lease",
			"to", aside, "problem", d.Problem)
	}
	return nil
}

// rejoinAsLearner (cases 4 and 5, and case 8 once the cluster is quorate): the member's old identity
// is removed from the cluster, its data moved aside, and it is added back as a learner to start empty
// with state existing; it catches up from the leader's raft snapshot and is promoted once it has
// (package member). A learner added by an earlier attempt that never started is reused, so that a
// retried initialization does not pile up learners (etcd allows one). It goes through the endpoints the
// cluster's facts were gathered through, never one that answered for another cluster.
func (i *Initializer) rejoinAsLearner(ctx context.Context, c Case, cluster ClusterFacts) (State, error) {
	cli, err := i.prober.clientOf(cluster.Endpoints)
	if err != nil {
		return State{}, err
	}
	defer cli.Close()
	self := i.opts.Member
	pending := false
	for _, m := range cluster.Members {
		if m.Name != self.Name && !memberconfig.SameURLs(m.PeerURLs, self.PeerURLs) {
			continue
		}
		if m.IsLearner && !m.Started {
			pending = true
			continue
		}
		err := i.retryReconfig(ctx, fmt.Sprintf("removing the old member %x", m.ID), func(ctx context.Context) error {
			_, err := cli.MemberRemove(ctx, m.ID)
			return memberGone(err)
		})
		if err != nil {
			return State{}, err
		}
		i.log.Info("Removed this member's old identity from the cluster", "memberID", fmt.Sprintf("%x", m.ID))
	}
	if err := i.moveDataAside(InspectDataDir(i.opts.DataDir, i.opts.Owner, false)); err != nil {
		return State{}, err
	}
	if err := writeMarker(i.opts.DataDir, i.opts.Owner); err != nil {
		return State{}, err
	}
	if !pending {
		var id uint64
		start := time.Now()
		err := i.retryReconfig(ctx, "adding this member as a learner", func(ctx context.Context) error {
			// etcd admits one learner at a time, but refuses a second one only when it applies the
			// addition: every attempt would be a raft entry (and an error in every member's log). So the
			// member list is read first (a read, no entry), and the addition is asked for once no other
			// learner catches up any more.
			list, err := cli.MemberList(ctx)
			if err != nil {
				return err
			}
			if other := otherLearner(list.Members, self); other != "" {
				return fmt.Errorf("learner %s is still catching up; etcd admits one learner at a time", other)
			}
			resp, err := cli.MemberAddAsLearner(ctx, self.PeerURLs)
			if err == nil {
				id = resp.Member.GetID()
			}
			if errors.Is(err, rpctypes.ErrPeerURLExist) || errors.Is(err, rpctypes.ErrGRPCPeerURLExist) {
				return nil // an earlier attempt's add went through although its answer was lost
			}
			return err
		})
		i.opts.Metrics.addedLearner(start, err)
		if err != nil {
			return State{}, err
		}
		i.log.Info("Added this member as a learner", "memberID", fmt.Sprintf("%x", id))
	}
	lctx, cancel := context.WithTimeout(ctx, i.opts.ProbeTimeout)
	defer cancel()
	list, err := cli.MemberList(lctx)
	if err != nil {
		return State{}, fmt.Errorf("listing members after the learner was added: %w", err)
	}
	var members []Member
	for _, m := range list.Members {
		members = append(members, Member{ID: m.GetID(), Name: m.GetName(), PeerURLs: m.GetPeerURLs(), IsLearner: m.GetIsLearner()})
	}
	return State{Case: c, ClusterState: memberconfig.ClusterStateExisting, JoinMembers: clusterMembers(members)}, nil
}

// waitForQuorumAndJoin (case 8): a member without valid data that may not restore alone waits until a
// quorate cluster answers (e.g. the first member restored it), then decides again with the new facts
// — which joins it as a learner, or reuses data if the cluster turned out to be its own. It never
// bootstraps: while waiting, it must not become a one-member cluster of its own.
func (i *Initializer) waitForQuorumAndJoin(ctx context.Context) (State, error) {
	deadline := time.Now().Add(i.opts.QuorumWait)
	i.log.Info("Waiting for a quorate cluster to join", "timeout", i.opts.QuorumWait)
	for {
		f, err := i.Observe(ctx)
		if err != nil {
			return State{}, err
		}
		if f.Cluster.Quorate {
			c := Decide(f)
			if c == CaseNonQuorateFollowingWait || c == CaseNonQuorateFirstRestore {
				return State{}, fmt.Errorf("unexpected decision %s for a quorate cluster", c)
			}
			i.log.Info("Cluster is quorate again", "case", c.String())
			st, err := i.act(ctx, c, f)
			st.Case = CaseNonQuorateFollowingWait
			return st, err
		}
		if time.Now().After(deadline) {
			if len(f.Cluster.Foreign) > 0 {
				return State{}, fmt.Errorf("%w: %s answer, but this Etcd's cluster is %s; refusing to join another cluster, the data directory is kept; retried later",
					ErrForeignCluster, f.Cluster.Foreign, f.Cluster.OwnCluster)
			}
			return State{}, errors.New("no quorate cluster to join and not allowed to restore alone; retried later")
		}
		select {
		case <-ctx.Done():
			return State{}, ctx.Err()
		case <-time.After(i.opts.PollInterval):
		}
	}
}

// ErrForeignCluster refuses to join the cluster that answers at the endpoints of an Etcd's existing
// (source) cluster when its cluster ID is not the Etcd's (Options.OwnClusterID, ownCluster): the source
// was decommissioned and its endpoints serve another cluster now, whose data is not the Etcd's.
var ErrForeignCluster = errors.New("only another etcd cluster answers")

// dataDirEmpty tells whether the data directory is absent or empty.
func dataDirEmpty(dir string) bool {
	entries, err := os.ReadDir(dir)
	return errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0)
}

// otherLearner names a learner of members that is not self (matched by name or peer URLs), "" when there is
// none. A learner that never started has no name yet; it is named by its peer URLs.
func otherLearner(members []*etcdserverpb.Member, self memberconfig.Member) string {
	for _, m := range members {
		if !m.GetIsLearner() || m.GetName() == self.Name || memberconfig.SameURLs(m.GetPeerURLs(), self.PeerURLs) {
			continue
		}
		if m.GetName() != "" {
			return m.GetName()
		}
		return strings.Join(m.GetPeerURLs(), ",")
	}
	return ""
}
