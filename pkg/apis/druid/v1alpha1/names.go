package v1alpha1

import (
	"fmt"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// The names of the objects druid creates for an Etcd (as upstream etcd-druid names them). Network
// policies, kube-apiserver configurations and monitoring of existing landscapes address these objects by
// name, so they are part of the wire contract.

// StatefulSetName is the name of the Etcd's StatefulSet (the Etcd name).
func StatefulSetName(e *Etcd) string { return e.Name }

// ServiceAccountName is the service account of the etcd pods.
func ServiceAccountName(e *Etcd) string { return e.Name }

// RoleName is the name of the Role and RoleBinding that let the sidecar renew its leases.
func RoleName(e *Etcd) string { return "druid.gardener.cloud:etcd:" + e.Name }

// ClientServiceName is the ClusterIP Service that clients use.
func ClientServiceName(e *Etcd) string { return e.Name + "-client" }

// PeerServiceName is the headless Service that gives each member a stable DNS name.
func PeerServiceName(e *Etcd) string { return e.Name + "-peer" }

// ConfigMapName holds the etcd configuration template.
func ConfigMapName(e *Etcd) string { return e.Name + "-config" }

// PDBName is the PodDisruptionBudget of the members.
func PDBName(e *Etcd) string { return e.Name }

// NetworkPolicyName is the NetworkPolicy that limits who may reach the members' ports.
func NetworkPolicyName(e *Etcd) string { return e.Name }

// FullSnapshotLeaseName is the lease the sidecar renews after each full snapshot.
func FullSnapshotLeaseName(e *Etcd) string { return e.Name + "-full-snap" }

// DeltaSnapshotLeaseName is the lease the sidecar renews after each delta snapshot.
func DeltaSnapshotLeaseName(e *Etcd) string { return e.Name + "-delta-snap" }

// CompactionJobName is the Job that compacts the snapshots of this Etcd.
func CompactionJobName(e *Etcd) string { return e.Name + "-compactor" }

// VolumeClaimTemplateName is the StatefulSet's PVC template name (spec.volumeClaimTemplate or the Etcd name).
func VolumeClaimTemplateName(e *Etcd) string {
	if e.Spec.VolumeClaimTemplate != nil && *e.Spec.VolumeClaimTemplate != "" {
		return *e.Spec.VolumeClaimTemplate
	}
	return e.Name
}

// PodName is the name of the pod with the given ordinal.
func PodName(e *Etcd, ordinal int) string { return fmt.Sprintf("%s-%d", e.Name, ordinal) }

// MemberLeaseName is the member lease of the pod with the given ordinal; it is also the etcd member name.
// With spec.memberNamePrefix it is `<prefix>-<pod>`.
func MemberLeaseName(e *Etcd, ordinal int) string {
	if e.Spec.MemberNamePrefix != nil && *e.Spec.MemberNamePrefix != "" {
		return *e.Spec.MemberNamePrefix + "-" + PodName(e, ordinal)
	}
	return PodName(e, ordinal)
}

// MemberLeaseNames lists the member lease names for spec.replicas members.
func MemberLeaseNames(e *Etcd) []string {
	names := make([]string, 0, e.Spec.Replicas)
	for i := 0; i < int(e.Spec.Replicas); i++ {
		names = append(names, MemberLeaseName(e, i))
	}
	return names
}

// OrdinalOf returns the ordinal encoded at the end of a member, lease or pod name of this Etcd, and false
// when the name does not belong to it.
func OrdinalOf(e *Etcd, name string) (int, bool) {
	base := e.Name + "-"
	if e.Spec.MemberNamePrefix != nil && *e.Spec.MemberNamePrefix != "" {
		base = *e.Spec.MemberNamePrefix + "-" + base
	}
	return etcdpod.OrdinalAfter(name, base)
}

// PodOrdinalOf returns the ordinal of a pod name of this Etcd (`<name>-<ordinal>`, whatever the member name
// prefix), and false when the name is no such pod name.
func PodOrdinalOf(e *Etcd, name string) (int, bool) { return etcdpod.OrdinalAfter(name, e.Name+"-") }

// ManagedLabels are the labels every object druid manages for this Etcd carries; they are also the
// StatefulSet's selector.
func ManagedLabels(e *Etcd) map[string]string {
	return map[string]string{LabelManagedByKey: LabelManagedByValue, LabelPartOfKey: e.Name}
}

// ComponentLabels are ManagedLabels plus the component and name labels of one managed object.
func ComponentLabels(e *Etcd, component, objectName string) map[string]string {
	labels := ManagedLabels(e)
	labels[LabelComponentKey] = component
	labels[LabelAppNameKey] = objectName
	return labels
}
