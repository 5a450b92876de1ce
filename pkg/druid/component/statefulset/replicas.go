package statefulset

import "fmt"

// ReplicaInput is what the replica decision needs to know about the StatefulSet, the spec and the member
// leases. It is a plain value so that the scale-up rules of seeds 000/001 can be tested as a table.
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
}

// ReplicaDecision is the replica count to write into the StatefulSet and whether the caller must come back
// later because the scale-up is not allowed yet.
type ReplicaDecision struct {
	Replicas int32
	Requeue  bool
	// Reason explains a requeue.
	Reason string
}

// DecideReplicas implements the reference's "Scale-up 1 → N with peer TLS": members that joined with an
// http peer URL must switch to https before new members join, because new members only talk TLS to their
// peers. So while peer TLS is configured and a scale-up is pending, the StatefulSet keeps its current
// replica count (its template, patched in the same Sync, restarts the members with the peer TLS volumes)
// until every existing member's sidecar reports tls-enabled "true" on its lease; only then are replicas
// raised. Creation, scale-down, hibernation and wake-up from zero replicas (no member to switch) are never
// held back.
func DecideReplicas(in ReplicaInput) ReplicaDecision {
	switch {
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
