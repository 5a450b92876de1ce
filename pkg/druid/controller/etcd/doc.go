// Package etcd is druid's Etcd controller. One reconcile runs the deletion flow, or the spec, status,
// heal and pod update flows; each is a slice of named steps (package flow), and the hand-offs between them are values:
//
//   - the deletion flow when the Etcd is being deleted: delete every component, wait until all are gone,
//     then remove the finalizer;
//   - otherwise the spec flow, when a spec reconcile is due (see SpecReconcileWanted): adopt the objects a
//     upstream etcd-druid left without druid's labels (adoptlabels.go, through the operators; run alone
//     when no spec flow runs, because the status flow needs it too), record the operation, add the
//     finalizer, check the referenced secrets, render the pod template (podtemplate.go), take a full
//     snapshot before hibernation or new images (snapshotbeforeupdate.go), sync the components in
//     registry order — the StatefulSet through statefulset.PlannedSyncer with that rendering, which
//     returns the StatefulSet as written — and
//     record success, held for the status flow's write (statuswrite.go), after which the operation
//     annotation is removed;
//   - and always the status flow: observe the StatefulSet (the spec flow's written one when the cache has
//     not seen it yet), pods, member and snapshot leases and PVC warnings, derive members, conditions and
//     replica counts (package health) and write the status when it changed (statusflow.go). It runs every
//     StatusSyncPeriod and on lease, pod and StatefulSet events;
//   - after it, on the same observation, the heal flow (healflow.go): heal.Run applies the decision table
//     (package heal/decide) and returns an Outcome — pods of NotReady members deleted, a quorum-loss
//     recovery's next step, completed scale-downs, the status those actions change — which this package
//     writes; then step 6 of a recovery (heal.FinishQuorumLossRecovery, only after that write) and a
//     PodDisruptionBudget re-sync when its minAvailable changed with the health (pdbtoggle.go);
//   - last, on the same observation, the member pod update (podupdate.go): the StatefulSet updates
//     OnDelete, and druid deletes the out-of-date member pods itself, one decision per reconcile in the
//     order package podupdate plans (members that do not serve first, the leader last, a serving member
//     only while the quorum holds and BackupReady is not False).
//
// The spec flow waits while a quorum-loss recovery runs. A new pod template is written whatever the
// members' health: writing it restarts no member, the pod update does, member by member. Missing secrets stop the
// spec flow before any component is synced: a spec reconcile either applies the whole spec or nothing of it.
package etcd
