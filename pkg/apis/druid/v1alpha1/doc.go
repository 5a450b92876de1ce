// Package v1alpha1 is the druid.gardener.cloud/v1alpha1 API (Etcd, EtcdCopyBackupsTask, EtcdOpsTask) as
// druid's code uses it: aliases of upstream etcd-druid's API module (types.go), the object names and labels
// druid derives from an Etcd (names.go), defaults applied in code (defaults.go) and what druid keeps beyond
// upstream's schema (annotations, snapshot leases).
package v1alpha1
