// Package etcd is druid's Etcd controller. One reconcile runs up to three flows, each a slice of steps
// (package flow):
//
//   - the deletion flow when the Etcd is being deleted: delete every component, wait until all are gone,
//     then remove the finalizer;
//   - otherwise the spec flow, when a spec reconcile is due (see SpecReconcileWanted): record the operation,
//     add the finalizer, check the referenced secrets, sync the components in registry order, record
//     success, remove the operation annotation;
//   - and always the status flow (the custodian): read the StatefulSet, pods, member and snapshot leases
//     and PVC warnings, apply seed 002's decision table (package healing; healing.go, quorumrecovery.go:
//     delete the pods of a minority of NotReady members, bootstrap a cluster that lost its quorum again
//     from the backup, complete scale-downs, remove superfluous members), derive members, conditions and
//     replica counts (package health), write the status when it changed and re-sync the
//     PodDisruptionBudget when its seed 002 minAvailable changed with the health. It runs every
//     StatusSyncPeriod and on lease, pod and StatefulSet events.
//
// The spec flow waits while a quorum-loss recovery runs, and holds back changes of the pod template (a
// rolling restart of every member) while AllMembersReady or BackupReady is False (rollinggate.go).
//
// Missing secrets stop the spec flow before any component is synced: no StatefulSet is created and an
// existing one is left as it is. Stopping before the harmless objects (ServiceAccount, RBAC, Services) as
// well keeps the rule simple: a spec reconcile either applies the whole spec or nothing of it.
package etcd
