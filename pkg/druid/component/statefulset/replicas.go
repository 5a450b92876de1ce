package statefulset

import (
	"fmt"
	"strings"
)

// ReplicaInput is what the replica decision needs to know about the StatefulSet, the spec and the member
// leases. It is a plain value so that the scale-up rules (upstream etcd-druid's DEP-03) can be tested as a table.
type ReplicaInput struct {
	// Exists is false when there is no StatefulSet yet.
	Exists bool
	// Current is the existing StatefulSet's spec.replicas.
	Current int32
	// Desired is the Etcd's spec.replicas.
	Desired int32
	// PeerTLSInSpec is true when spec.etcd.peerUrlTls is set.
	PeerTLSInSpec bool
	// PeerTLSVolumesUpToDate is true when the existing pod template already mounts the spec's peer TLS
	// secrets (false means the peer TLS is newly enabled or its secrets changed).
	PeerTLSVolumesUpToDate bool
	// AllMembersPeerTLSEnabled is true when every existing member's lease (ordinals below Current) carries
	// member.etcd.gardener.cloud/tls-enabled: "true".
	AllMembersPeerTLSEnabled bool
	// MembersStillInCluster names the members a scale-in drops (ordinals Desired..Current-1) that may still
	// be in the etcd membership: their lease does not carry the backup leader's left-cluster annotation for
	// the member ID it names (health.MayStillBeMember). Only filled while a scale-in to at least one member
	// is pending.
	MembersStillInCluster []string
}

// ReplicaDecision is the replica count to write into the StatefulSet and whether the caller must come back
// later because the scale-up is not allowed yet.
type ReplicaDecision struct {
	Replicas int32
	Requeue  bool
	// Reason explains a requeue.
	Reason string
	// ScaleIn is set when the requeue holds back a scale-in (else it holds back a scale-up).
	ScaleIn bool
}

// DecideReplicas holds back two kinds of replica changes.
//
// Scale-in (d < n, d ≥ 1): members leave the etcd membership while their pods still run, and the pods go
// only afterwards. Removing a member that runs never costs quorum (the rest of n healthy members is a
// quorum of the smaller membership), whereas deleting pods first leaves their members counting against
// quorum until someone removes them, which for 3 → 1 or 5 → 1 is impossible: the survivor alone is no
// quorum of the old membership, so nothing can be removed and the cluster stays leaderless. So the
// StatefulSet keeps n replicas (the ConfigMap, already rendered for d members, tells the backup leader
// which members to remove) until no member it drops is still in the cluster. This holds for every
// scale-in, not only those that drop a majority: a 5 → 3 done pods-first runs with two dead voters until
// the cleanup, one more failure from losing quorum. Hibernation (d = 0) removes no member: its volumes
// keep the whole cluster for the wake-up.
//
// Scale-up with peer TLS implements the reference's "Scale-up 1 → N with peer TLS": members that joined with an
// http peer URL must switch to https before new members join, because new members only talk TLS to their
// peers. So while peer TLS is configured and a scale-up is pending, the StatefulSet keeps its current
// replica count (its template, patched in the same Sync, restarts the members with the peer TLS volumes)
// until every existing member's sidecar reports tls-enabled "true" on its lease; only then are replicas
// raised. Creation, hibernation and wake-up from zero replicas (no member to switch) are never held
// back by the peer-TLS rule.
func DecideReplicas(in ReplicaInput) ReplicaDecision {
	switch {
	case in.Exists && in.Desired > 0 && in.Desired < in.Current && len(in.MembersStillInCluster) > 0:
		return ReplicaDecision{Replicas: in.Current, Requeue: true, ScaleIn: true, Reason: fmt.Sprintf(
			"scale-in from %d to %d: waiting until the backup leader has removed %s from the etcd membership before their pods go",
			in.Current, in.Desired, strings.Join(in.MembersStillInCluster, ", "))}
	case !in.Exists, in.Desired <= in.Current, in.Current == 0, !in.PeerTLSInSpec:
		return ReplicaDecision{Replicas: in.Desired}
	case !in.PeerTLSVolumesUpToDate:
		return ReplicaDecision{Replicas: in.Current, Requeue: true, Reason: fmt.Sprintf(
			"peer TLS newly enabled: rolling the %d existing member(s) with the peer TLS volumes before scaling to %d", in.Current, in.Desired)}
	case !in.AllMembersPeerTLSEnabled:
		return ReplicaDecision{Replicas: in.Current, Requeue: true, Reason: fmt.Sprintf(
			"waiting until every existing member lease reports peer TLS enabled before scaling from %d to %d", in.Current, in.Desired)}
	default:
		return ReplicaDecision{Replicas: in.Desired}
	}
}
