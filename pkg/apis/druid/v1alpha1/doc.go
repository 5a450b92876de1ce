// Package v1alpha1 holds the druid.gardener.cloud/v1alpha1 API (Etcd, EtcdCopyBackupsTask).
//
// The JSON names are those that existing Gardener landscapes store (upstream etcd-druid's API): an Etcd
// written by an existing gardenlet must mean the same thing to our controllers, so every field keeps its wire
// name and additions are optional. The Go names and the package layout are ours, because the upstream Go
// modules are not reachable.
//
// +kubebuilder:object:generate=true
// +groupName=druid.gardener.cloud
package v1alpha1
