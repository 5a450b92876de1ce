// Package podupdate decides which member pod druid deletes next so that the StatefulSet controller, whose
// update strategy druid sets to OnDelete, recreates it with the current pod template. It replaces the
// StatefulSet controller's own rolling update, which goes by ordinal and knows neither the members' health
// nor their roles: a crash-looping member may wait behind serving ones (which then drop the cluster below
// its quorum) and the leader may go before its followers.
//
// Plan is a pure function of what druid observed; Members builds its input from the pods and member leases.
// The rules, in the order Plan applies them:
//  1. Nothing to do while no pod is out of date (its revision label differs from the update revision). A
//     pod without the label is not judged: druid deletes only what it knows to be out of date.
//  2. An updated pod whose container crashed or cannot start (the update revision is broken) holds the
//     update: replacing further members would only spread the failure, and would take away members that
//     might still recover on their own. The next template (a new update revision) makes that pod out of
//     date, and rule 3 replaces it first.
//  3. Out-of-date members whose etcd container does not run go first: a broken container before a starting
//     one. Without a running etcd they cast no vote, so deleting them cannot reduce the quorum, and the new
//     template may be their remedy. They may go while other members are being replaced; one deletion per
//     reconcile.
//  4. Every other member goes only when no replacement is under way: no member pod terminating or missing,
//     and every updated member serving again. That includes a member whose etcd runs without being ready:
//     its readiness probe may fail (under load, catching up, defragmenting) while it still votes, so it is
//     replaced one at a time, and only while the serving members alone hold the quorum (rule 7).
//  5. Serving members go only while BackupReady is not False (a cluster without a current backup is not
//     disturbed; the members that do not serve are not held by this).
//  6. … followers first, a member of unknown role next, the leader last; the highest ordinal first among
//     equals.
//  7. … and never when the members that keep serving would be fewer than the quorum of the cluster size.
//     A single member has no quorum to keep: its restart is the update.
package podupdate

import (
	"cmp"
	"fmt"
	"slices"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Health is what a member's pod says about its etcd.
type Health int

// Health values, in the order rule 3 replaces members that do not serve.
const (
	// Broken: a container exited or waits on an error (CrashLoopBackOff, an image that cannot be pulled, a
	// configuration the runtime refuses); the pod phase is Failed.
	Broken Health = iota
	// Starting: the pod is pending or its containers are being created.
	Starting
	// Unready: the containers run, but neither the pod nor its etcd container is ready.
	Unready
	// Serving: the pod or its etcd container is ready. The etcd container's readiness probe is a
	// linearizable read (wrapper /readyz) for a member of a multi-member cluster: it passes only on a member
	// that takes part in a quorate cluster. The pod alone is not enough: it is not Ready while only the
	// backup-restore sidecar is down, and that member still serves.
	Serving
)

// String names the health in logs and events.
func (h Health) String() string {
	switch h {
	case Broken:
		return "broken"
	case Starting:
		return "starting"
	case Unready:
		return "not ready"
	case Serving:
		return "serving"
	}
	return fmt.Sprintf("Health(%d)", int(h))
}

// Member is one member pod as Plan sees it.
type Member struct {
	Pod     string
	Ordinal int
	// Revision is the pod's controller-revision-hash label ("" without it).
	Revision    string
	Health      Health
	Terminating bool
	// EtcdRunning: the etcd container runs (see EtcdRunning); such a member may vote without being ready.
	EtcdRunning bool
	// Detail says what Health was judged on (e.g. "etcd container CrashLoopBackOff").
	Detail string
	// Role is the member's role from its lease (Leader or Member), "" when the lease does not tell.
	Role druidv1alpha1.EtcdRole
}

// Input is what Plan decides on.
type Input struct {
	// UpdateRevision is the StatefulSet's status.updateRevision.
	UpdateRevision string
	// Replicas is the StatefulSet's spec.replicas: the ordinals that should have a pod.
	Replicas int32
	// ClusterSize is the number of voting members the quorum is counted against (the recorded cluster
	// size); Plan counts against the larger of it and Replicas.
	ClusterSize int32
	// BackupNotReady is why serving members are not replaced now (BackupReady False), "" otherwise.
	BackupNotReady string
	// Members are the pods of the ordinals below Replicas that exist.
	Members []Member
}

// Verdict is what Plan tells the caller to do.
type Verdict string

const (
	// Done: no pod is out of date.
	Done Verdict = "Done"
	// Delete: delete Decision.Member's pod.
	Delete Verdict = "Delete"
	// Wait: a replacement is under way; look again soon.
	Wait Verdict = "Wait"
	// Hold: the update cannot go on until something changes that druid does not do itself (a member comes
	// back, a new template, the backup catches up); Decision.Reason says what.
	Hold Verdict = "Hold"
)

// Decision is Plan's answer. Member is the member to delete (Delete) or the one the Reason is about.
type Decision struct {
	Verdict Verdict
	Member  *Member
	Reason  string
}

// Plan applies the rules of the package documentation to in.
func Plan(in Input) Decision {
	var outdated []Member
	for _, m := range in.Members {
		if m.Revision != "" && m.Revision != in.UpdateRevision && !m.Terminating {
			outdated = append(outdated, m)
		}
	}
	if len(outdated) == 0 {
		return Decision{Verdict: Done, Reason: "no member pod is out of date"}
	}

	for _, m := range in.Members {
		if m.Revision == in.UpdateRevision && m.Health == Broken && !m.Terminating {
			return Decision{Verdict: Hold, Member: &m, Reason: fmt.Sprintf(
				"pod %s runs the update revision %s and is broken (%s): no further member is replaced until it serves again or a new pod template replaces it",
				m.Pod, in.UpdateRevision, m.Detail)}
		}
	}

	byHealth := func(a, b Member) int {
		return cmp.Or(cmp.Compare(a.Health, b.Health), cmp.Compare(b.Ordinal, a.Ordinal))
	}
	notVoting := slices.DeleteFunc(slices.Clone(outdated), func(m Member) bool { return m.Health == Serving || m.EtcdRunning })
	if len(notVoting) > 0 {
		slices.SortStableFunc(notVoting, byHealth)
		m := notVoting[0]
		return Decision{Verdict: Delete, Member: &m, Reason: fmt.Sprintf(
			"not serving (%s) and its etcd does not run: it casts no vote, and the update may be its remedy", m.Detail)}
	}

	if d, busy := replacementUnderWay(in); busy {
		return d
	}
	size := max(in.ClusterSize, in.Replicas)
	serving := 0
	for _, m := range in.Members {
		if m.Health == Serving && !m.Terminating {
			serving++
		}
	}
	quorum := int(size/2 + 1)
	if unready := slices.DeleteFunc(slices.Clone(outdated), func(m Member) bool { return m.Health == Serving }); len(unready) > 0 {
		slices.SortStableFunc(unready, byHealth)
		m := unready[0]
		if size > 1 && serving < quorum {
			return Decision{Verdict: Hold, Member: &m, Reason: fmt.Sprintf(
				"pod %s does not serve (%s) but its etcd runs and may still vote; only %d members serve, below the quorum of %d of %d members",
				m.Pod, m.Detail, serving, quorum, size)}
		}
		return Decision{Verdict: Delete, Member: &m, Reason: fmt.Sprintf(
			"not serving (%s), its etcd runs; %d other members serve, the quorum is %d of %d", m.Detail, serving, quorum, size)}
	}
	if in.BackupNotReady != "" {
		return Decision{Verdict: Hold, Reason: "serving members are not replaced while BackupReady is False: " + in.BackupNotReady}
	}

	slices.SortStableFunc(outdated, func(a, b Member) int {
		return cmp.Or(cmp.Compare(roleRank(a.Role), roleRank(b.Role)), cmp.Compare(b.Ordinal, a.Ordinal))
	})
	target := outdated[0]
	why := roleReason(target.Role)
	if size <= 1 {
		return Decision{Verdict: Delete, Member: &target, Reason: why + "; a single member has no quorum to keep, its restart is the update"}
	}
	if serving-1 < quorum {
		return Decision{Verdict: Hold, Member: &target, Reason: fmt.Sprintf(
			"replacing pod %s would leave %d serving members, below the quorum of %d of %d members", target.Pod, serving-1, quorum, size)}
	}
	return Decision{Verdict: Delete, Member: &target, Reason: fmt.Sprintf("%s; %d members keep serving, the quorum is %d of %d", why, serving-1, quorum, size)}
}

// replacementUnderWay tells whether a member is being replaced (rule 4): a pod terminating or missing, or
// an updated member that does not serve yet.
func replacementUnderWay(in Input) (Decision, bool) {
	present := map[int]bool{}
	for _, m := range in.Members {
		present[m.Ordinal] = true
		if m.Terminating {
			return Decision{Verdict: Wait, Member: &m, Reason: fmt.Sprintf("pod %s is terminating", m.Pod)}, true
		}
	}
	for i := 0; i < int(in.Replicas); i++ {
		if !present[i] {
			return Decision{Verdict: Wait, Reason: fmt.Sprintf("the pod of ordinal %d does not exist yet", i)}, true
		}
	}
	for _, m := range in.Members {
		if m.Revision == in.UpdateRevision && m.Health != Serving {
			return Decision{Verdict: Wait, Member: &m, Reason: fmt.Sprintf("pod %s runs the update revision but does not serve yet (%s)", m.Pod, m.Detail)}, true
		}
	}
	return Decision{}, false
}

func roleRank(role druidv1alpha1.EtcdRole) int {
	switch role {
	case druidv1alpha1.EtcdRoleMember:
		return 0
	case druidv1alpha1.EtcdRoleLeader:
		return 2
	}
	return 1
}

// roleReason says why a serving out-of-date member of role was chosen.
func roleReason(role druidv1alpha1.EtcdRole) string {
	switch role {
	case druidv1alpha1.EtcdRoleMember:
		return "serving follower, replaced before the leader"
	case druidv1alpha1.EtcdRoleLeader:
		return "serving leader, replaced last"
	}
	return "serving member whose lease names no role (between the followers and the leader)"
}
