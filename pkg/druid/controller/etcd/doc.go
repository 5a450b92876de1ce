// Package etcd is druid's Etcd controller. One reconcile runs the deletion flow, or the spec, status and
// heal flows; each is a slice of steps (package flow):
//
//   - the deletion flow when the Etcd is being deleted: delete every component, wait until all are gone,
//     then remove the finalizer;
//   - otherwise the spec flow, when a spec reconcile is due (see SpecReconcileWanted): record the operation,
//     add the finalizer, check the referenced secrets, sync the components in registry order, record
//     success — held for the status flow's write, so that the success and the health the status flow
//     observed go out in one status write (statuswrite.go) — and after that write remove the operation
//     annotation;
//   - and always the status flow: read the StatefulSet, pods, member and snapshot leases and PVC
//     warnings, derive members, conditions and replica counts (package health) and write the status when
//     it changed — observe → compute → write, nothing else (statusflow.go); after a spec flow it takes
//     the StatefulSet as that flow wrote it when the cache has not seen the write yet. It runs every
//     StatusSyncPeriod and on lease, pod and StatefulSet events;
//   - after it, on the same observation, the heal flow (healflow.go): apply seed 002's decision table
//     (package healing) — delete the pods of a minority of NotReady members, bootstrap a cluster that lost
//     its quorum again from the backup (quorumrecovery.go, one typed phase: healing.QuorumLossRecoveryPhase),
//     complete scale-downs, remove superfluous members, say why a quorum loss is not acted on — write the
//     status those actions change, and re-sync the PodDisruptionBudget when its seed 002 minAvailable
//     changed with the health. The StatefulSet and the member leases are written only through their
//     operators (statefulset.Scaler, memberlease.Healer).
//
// The spec flow waits while a quorum-loss recovery runs, and holds back changes of the pod template (a
// rolling restart of every member) while AllMembersReady or BackupReady is False (rollinggate.go). Before
// it scales a running StatefulSet to 0 or gives its members new etcd or backup-restore images, it has the
// backup leader take a full snapshot and waits for it (snapshotbeforeupdate.go).
//
// Missing secrets stop the spec flow before any component is synced: no StatefulSet is created and an
// existing one is left as it is. Stopping before the harmless objects (ServiceAccount, RBAC, Services) as
// well keeps the rule simple: a spec reconcile either applies the whole spec or nothing of it.
package etcd
