// Package operators wires every component operator into a component.Registry in the reference's sync
// order. It is separate from package component because the operator packages depend on component.
package operators

import (
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/clientservice"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/memberlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/networkpolicy"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/peerservice"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/poddisruptionbudget"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/role"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/rolebinding"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/serviceaccount"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/snapshotlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// Options configure the operators that have settings of their own.
type Options struct {
	// Images are druid's configured container images.
	Images config.Images
	// LocalBackup limits the node directories a Local backup store may mount (nil list: the default).
	LocalBackup config.LocalBackup
	// BackupPortAccess names the namespaces the NetworkPolicy admits to the backup-restore port.
	BackupPortAccess config.BackupPortAccess
	// PDBMinAvailable overrides the PodDisruptionBudget's minAvailable policy (default: quorum).
	PDBMinAvailable poddisruptionbudget.MinAvailablePolicy
	// Skip are optional kinds druid's role does not allow: they get component.Skipped.
	Skip []component.Kind
}

// New returns the registry of all operators, writing through c and reading through c's cache (c.Live
// when a create finds an object the cache did not show).
func New(c component.Clients, opts Options) component.Registry {
	var pdbOpts []poddisruptionbudget.Option
	if opts.PDBMinAvailable != nil {
		pdbOpts = append(pdbOpts, poddisruptionbudget.WithMinAvailablePolicy(opts.PDBMinAvailable))
	}
	ops := map[component.Kind]component.Operator{
		component.KindServiceAccount:      serviceaccount.New(c),
		component.KindRole:                role.New(c, opts.Images),
		component.KindRoleBinding:         rolebinding.New(c),
		component.KindMemberLease:         memberlease.New(c),
		component.KindSnapshotLease:       snapshotlease.New(c),
		component.KindPodDisruptionBudget: poddisruptionbudget.New(c, pdbOpts...),
		component.KindNetworkPolicy:       networkpolicy.New(c, opts.BackupPortAccess),
		component.KindClientService:       clientservice.New(c),
		component.KindPeerService:         peerservice.New(c),
		component.KindConfigMap:           configmap.New(c),
		component.KindStatefulSet:         statefulset.New(c, opts.Images, opts.LocalBackup),
	}
	for _, kind := range opts.Skip {
		ops[kind] = component.Skipped{}
	}
	registry, err := component.NewRegistry(ops)
	if err != nil {
		// Every kind is listed above; a failure here is a programming error caught by the tests.
		panic(err)
	}
	return registry
}
