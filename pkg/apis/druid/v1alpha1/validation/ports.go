package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// podPort is one port an etcd pod listens on, with its value after defaulting.
type podPort struct {
	fld   *field.Path
	value int32
}

// podPorts are the four ports of an etcd pod: etcd's client and peer ports and the wrapper's port in the
// `etcd` container, the sidecar's port in `backup-restore`. Both containers share the pod's network
// namespace, so a port two of them use is bound by the one that starts first and the other crash-loops.
func podPorts(spec *druidv1alpha1.EtcdSpec, fld *field.Path) []podPort {
	etcd, backup := fld.Child("etcd"), fld.Child("backup")
	return []podPort{
		{etcd.Child("clientPort"), ptr.Deref(spec.Etcd.ClientPort, druidv1alpha1.DefaultClientPort)},
		{etcd.Child("serverPort"), ptr.Deref(spec.Etcd.ServerPort, druidv1alpha1.DefaultServerPort)},
		{etcd.Child("wrapperPort"), ptr.Deref(spec.Etcd.WrapperPort, druidv1alpha1.DefaultWrapperPort)},
		{backup.Child("port"), ptr.Deref(spec.Backup.Port, druidv1alpha1.DefaultBackupPort)},
	}
}

// validateDistinctPorts refuses two of the pod's ports with the same number (an unset port counts with its
// default). The error is reported on each of the two fields, so that an update that changes either one is
// judged (Ratchet keeps the errors of changed fields).
func validateDistinctPorts(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	ports := podPorts(spec, fld)
	var errs field.ErrorList
	for i, p := range ports {
		for j, q := range ports {
			if i != j && p.value == q.value {
				errs = append(errs, field.Invalid(p.fld, p.value, fmt.Sprintf(
					"must differ from %s (%d, default or set): the etcd and backup-restore containers share the pod's ports", q.fld, q.value)))
			}
		}
	}
	return errs
}

// privilegedPortWarnings name ports below 1024 of a pod that does not run as root: whether such a pod may
// bind them depends on the node's container runtime (net.ipv4.ip_unprivileged_port_start).
func privilegedPortWarnings(spec *druidv1alpha1.EtcdSpec, fld *field.Path) []string {
	if ptr.Deref(spec.RunAsRoot, false) {
		return nil
	}
	var warnings []string
	for _, p := range podPorts(spec, fld) {
		if p.value < 1024 {
			warnings = append(warnings, fmt.Sprintf("%s: %d is a privileged port; the etcd pods run as uid %d and can bind it only where the node's runtime allows unprivileged ports below 1024",
				p.fld, p.value, druidv1alpha1.DefaultRunAsUser))
		}
	}
	return warnings
}
