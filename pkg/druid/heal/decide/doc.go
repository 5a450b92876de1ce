// Package decide is the heal flow's decision table: it classifies an Etcd's observed state into the cases
// 1–13 of druid's decision table based on the status (one row per situation a cluster can be in, from
// "all members Ready" to "quorum lost") and says, as a list of Actions, what druid should do about it.
// Decide is a pure function of what the status flow observed and computed, so the whole table is tested
// without an apiserver; package heal applies the actions (run.go, actions.go and quorumrecovery.go).
// Not to be confused with package health, which turns the observation into the status and conditions.
//
// Who does what:
//   - Cases 2–8 (stale member statuses and conditions) are answered by the status write itself: the
//     status flow recomputes members and conditions from the leases every period. Decide still names them,
//     so that logs and tests show which row of the table applied.
//   - Case 9 (minority NotReady past the grace period): delete those members' pods, never more than a
//     minority, only pods that had the grace period to come back and never the pod of a member whose pod
//     or etcd container is Ready (its lease is stale because the renewals stopped, not the member).
//   - Case 10 (quorum lost, majority NotReady past the grace period): the quorum-loss recovery, six steps
//     (QuorumLossRecoveryPhase): scale the StatefulSet to 0, wait for the pods to be gone, read every
//     member volume and save the most advanced one to the backup store (PlanSurvivingData), delete the
//     members' data volumes, recreate the member leases empty, clear the members and set clusterSize to
//     spec.replicas, scale back — the members bootstrap again and the sidecars restore from the backup.
//     Never while a lost member's pod or etcd container is Ready: etcd may still serve, the stale leases
//     then point at the lease renewals, and Decide asks to report that (LeaseRenewalSuspected). Only with
//     a backup store that holds every acknowledged write: BackupReady is not False, or it is False only
//     because a cluster without quorum takes no snapshots — the backup was current when the cluster last
//     had quorum (backupatloss.go). Otherwise Decide asks to report that manual action is needed. Druid
//     never wipes a cluster that has no backup to come back from.
//   - Case 11 (scale-up) belongs to the spec flow: it raises the StatefulSet's replicas (after the peer-TLS
//     gate) and creates the new, empty member leases; the new members join as learners. Decide only names it.
//   - Case 12 (scale-down): the spec flow renders the configuration for spec.replicas members and lowers the
//     StatefulSet's replicas — the StatefulSet removes the highest ordinals — only once the backup leader
//     has marked the leases of the members it drops as removed from the etcd membership (so that the
//     members leave while their pods run and quorum holds). Once the StatefulSet is at spec.replicas, the
//     status flow completes it: leases of ordinals ≥ spec.replicas are deleted and status.clusterSize is
//     set to spec.replicas, also when the remaining members could not reach the old cluster's quorum.
//   - Case 13 (superfluous status entries): members with ordinal ≥ spec.replicas while the StatefulSet runs
//     exactly spec.replicas lose their status entry and their lease.
//   - Case 14 (member relocation, relocation.go): a member NotReady past the grace period whose pod does
//     not run is named for relocation while the other members hold the quorum (one member at a time,
//     never a single member); the action judges on the stored claim, volume and Nodes whether the volume
//     is lost (JudgeRelocation) and, if so, deletes the member's claim and pod so that both are created
//     anew on a live node and the empty member rejoins as a learner.
//
// Contract with the backup-restore sidecar (its backup leader): etcd members whose ordinal is ≥ the
// cluster size of the configuration (the ConfigMap's initial-cluster) are superfluous; the leader removes
// them from the etcd cluster (MemberRemove) and marks their leases (member.etcd.gardener.cloud/left-cluster),
// and a removed member's sidecar refuses to initialize, so it never comes back by itself.
//
// Which out-of-date member pod is replaced after a pod template change is not decided here but in package
// podupdate: the StatefulSet updates OnDelete, and a template change restarts no member by itself.
package decide
