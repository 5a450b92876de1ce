package config

import (
	"errors"
	"fmt"
	"slices"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// BackupPortAccess names who, beyond an Etcd's own namespace and its members, may reach the members'
// backup-restore port through the NetworkPolicy druid writes. Gardener's released sidecar image serves its
// initialization and snapshot endpoints there without authentication, so druid's policy admits named
// namespaces only, never "any namespace" (other allow policies in the Etcd's namespace add to it).
type BackupPortAccess struct {
	// DruidNamespace is the namespace druid's own pods run in; only there are pods labelled
	// app.kubernetes.io/name=etcd-druid admitted as druid. The command fills it from --druid-namespace or,
	// in a pod, from its service account's namespace; empty when druid runs outside the cluster (it then
	// reaches no pod through the pod network, and no rule is written for it).
	DruidNamespace string
	// ClientNamespaces are the namespaces whose pods labelled for the Etcd's client Service on the backup
	// port (Gardener's networking.resources.gardener.cloud/to-<n>-client-tcp-<port>: allowed) may reach it,
	// besides the Etcd's own namespace; pods there labelled for all shoots
	// (to-all-shoots-<n>-client-tcp-<port>) may too. nil means DruidNamespace: in Gardener, gardenlet runs
	// next to druid (namespace garden) and calls the sidecar's snapshot endpoint too. An empty, non-nil list
	// names none; pods in DruidNamespace with the all-shoots label, gardenlet's, are admitted regardless.
	ClientNamespaces []string
}

// Namespaces is the effective list of ClientNamespaces, sorted and without duplicates.
func (c BackupPortAccess) Namespaces() []string {
	names := c.ClientNamespaces
	if names == nil && c.DruidNamespace != "" {
		names = []string{c.DruidNamespace}
	}
	names = slices.Clone(names)
	slices.Sort(names)
	return slices.Compact(names)
}

// Validate rejects names that cannot be namespaces.
func (c BackupPortAccess) Validate() error {
	var errs []error
	for _, name := range append([]string{c.DruidNamespace}, c.ClientNamespaces...) {
		if name == "" {
			continue
		}
		for _, msg := range utilvalidation.IsDNS1123Label(name) {
			errs = append(errs, fmt.Errorf("backup port access: %q is no namespace name: %s", name, msg))
		}
	}
	return errors.Join(errs...)
}
