// Package gardenerpolicies runs the two controllers that write a Gardener seed's NetworkPolicies, from
// Gardener's own module, against the local seed:
//
//   - gardenlet's NetworkPolicy controller (github.com/gardener/gardener/pkg/controller/networkpolicy):
//     `deny-all`, `allow-to-dns`, `allow-to-runtime-apiserver`, `allow-to-public-networks`,
//     `allow-to-private-networks` and `allow-to-blocked-cidrs` in the garden namespace, in shoot namespaces
//     (`gardener.cloud/role: shoot`) and in extension namespaces;
//   - gardener-resource-manager's NetworkPolicy controller
//     (github.com/gardener/gardener/pkg/resourcemanager/controller/networkpolicy): the policies that the
//     `networking.resources.gardener.cloud/*` annotations of Services ask for, which open a Service's ports
//     to the pods labelled `networking.resources.gardener.cloud/to-<service>-<protocol>-<port>: allowed`
//     (also across namespaces) and to the world (`from-world-to-ports`).
//
// Together with an enforcer on the nodes (localseed.Options.NetworkPolicies) a pod reaches only what a
// Gardener seed lets it reach, so the labels and annotations druid, the Gardener side and the charts write
// are tested for real instead of being objects nothing acts on.
package gardenerpolicies

import (
	"context"
	"fmt"

	"github.com/gardener/gardener/pkg/api/indexer"
	resourcemanagerconfigv1alpha1 "github.com/gardener/gardener/pkg/apis/config/resourcemanager/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	extensionscrds "github.com/gardener/gardener/pkg/component/extensions/crds"
	seedpolicies "github.com/gardener/gardener/pkg/controller/networkpolicy"
	resourcemanagerpolicies "github.com/gardener/gardener/pkg/resourcemanager/controller/networkpolicy"
	"github.com/go-logr/logr"
	istionetworkingv1beta1 "istio.io/client-go/pkg/apis/networking/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Networks are the seed's networks as a Seed declares them (`spec.networks`). The node network is left out
// on purpose: the local seed's apiserver and S3 server listen on the host's address in it, which Gardener's
// `allow-to-private-networks` would otherwise exclude; on a real seed both are outside the node network.
type Networks struct {
	// Pods is the CIDR of the pod network.
	Pods string
	// Services is the CIDR of the service network.
	Services string
}

// Start installs Gardener's shoot extension CRDs (the Cluster resource, which gardenlet's controller reads
// for shoot namespaces) and runs both controllers until ctx ends. done is closed when they have stopped.
func Start(ctx context.Context, cfg *rest.Config, networks Networks, log logr.Logger) (done <-chan struct{}, err error) {
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	crds, err := extensionscrds.NewCRD(c, false, true)
	if err != nil {
		return nil, err
	}
	if err := crds.Deploy(ctx); err != nil {
		return nil, fmt.Errorf("installing Gardener's extension CRDs: %w", err)
	}
	if err := crds.Wait(ctx); err != nil {
		return nil, fmt.Errorf("waiting for Gardener's extension CRDs: %w", err)
	}
	mgr, err := manager.New(cfg, manager.Options{Scheme: scheme, Logger: log, Metrics: metricsserver.Options{BindAddress: "0"},
		// Both of Gardener's controllers are named "networkpolicy": each runs in a process of its own there.
		HealthProbeBindAddress: "0", Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		return nil, err
	}
	// The resource manager's controller finds the Services that select other namespaces through this index
	// (gardener-resource-manager registers it at start).
	if err := indexer.AddServiceNamespaceSelectors(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, fmt.Errorf("indexing Services by namespace selectors: %w", err)
	}
	if err := addSeedController(mgr, networks); err != nil {
		return nil, fmt.Errorf("adding gardenlet's NetworkPolicy controller: %w", err)
	}
	if err := addResourceManagerController(ctx, mgr); err != nil {
		return nil, fmt.Errorf("adding gardener-resource-manager's NetworkPolicy controller: %w", err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			log.Error(err, "Gardener's NetworkPolicy controllers stopped")
		}
	}()
	return stopped, nil
}

// addSeedController adds gardenlet's controller as gardenlet configures it for a seed, with the Cluster
// watch gardenlet adds (a shoot namespace's private-network policy excludes the shoot's networks, read
// from its Cluster).
func addSeedController(mgr manager.Manager, networks Networks) error {
	r := &seedpolicies.Reconciler{
		RuntimeNetworks: seedpolicies.RuntimeNetworkConfig{
			IPFamilies: []gardencorev1beta1.IPFamily{gardencorev1beta1.IPFamilyIPv4},
			Pods:       []string{networks.Pods},
			Services:   []string{networks.Services},
		},
	}
	r.WatchRegisterers = append(r.WatchRegisterers, func(c controller.Controller) error {
		return c.Watch(source.Kind[client.Object](mgr.GetCache(), &extensionsv1alpha1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(r.MapObjectToName)))
	})
	return r.AddToManager(mgr, mgr)
}

// addResourceManagerController adds gardener-resource-manager's controller with the namespace selectors
// Gardener gives the seed's resource manager (pkg/component/gardener/resourcemanager).
func addResourceManagerController(ctx context.Context, mgr manager.Manager) error {
	r := &resourcemanagerpolicies.Reconciler{Config: resourcemanagerconfigv1alpha1.NetworkPolicyControllerConfig{
		Enabled: true,
		NamespaceSelectors: []metav1.LabelSelector{
			{MatchLabels: map[string]string{v1beta1constants.GardenRole: v1beta1constants.GardenRoleShoot}},
			{MatchLabels: map[string]string{v1beta1constants.GardenRole: v1beta1constants.GardenRoleExtension}},
			{MatchLabels: map[string]string{v1beta1constants.GardenRole: v1beta1constants.GardenRoleIstioSystem}},
			{MatchLabels: map[string]string{v1beta1constants.GardenRole: v1beta1constants.GardenRoleIstioIngress}},
			{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: v1beta1constants.LabelExposureClassHandlerName, Operator: metav1.LabelSelectorOpExists}}},
			{MatchLabels: map[string]string{corev1.LabelMetadataName: v1beta1constants.GardenNamespace}},
		},
	}}
	return r.AddToManager(ctx, mgr, mgr)
}

// newScheme knows the CRDs it installs and what both controllers read: core and networking objects, Clusters, and Istio's
// VirtualService (the resource manager's controller resolves its kind even where Istio is not installed).
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, extensionsv1alpha1.AddToScheme, istionetworkingv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}
