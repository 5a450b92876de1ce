// Package peerservice manages the headless Service `<n>-peer` that gives every member the stable DNS name
// `<pod>.<n>-peer.<ns>.svc` used in the etcd peer URLs. It publishes not-ready addresses because members
// must find each other before any of them is ready (bootstrap, quorum loss).
package peerservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

const kind = component.KindPeerService

// PortNamePeer is the name of the peer Service's only port.
const PortNamePeer = "peer"

type operator struct {
	client client.Client
}

// New returns the peer Service operator.
func New(c client.Client) component.Operator {
	return &operator{client: c}
}

func emptyService(etcd *druidv1alpha1.Etcd) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: etcd.PeerServiceName(), Namespace: etcd.Namespace}}
}

// Sync creates or patches the Service. clusterIP None is set on creation only: it is immutable afterwards.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	svc := emptyService(etcd)
	result, err := controllerutil.CreateOrPatch(ctx, o.client, svc, func() error {
		component.ApplyManagedMeta(svc, etcd, druidv1alpha1.ComponentPeerService)
		if svc.CreationTimestamp.IsZero() {
			svc.Spec.ClusterIP = corev1.ClusterIPNone
		}
		svc.Spec.Type = corev1.ServiceTypeClusterIP
		svc.Spec.PublishNotReadyAddresses = true
		svc.Spec.Selector = etcd.ManagedLabels()
		port := *etcd.Spec.Etcd.ServerPort
		svc.Spec.Ports = []corev1.ServicePort{{Name: PortNamePeer, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}}
		return nil
	})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "syncing peer service %s", svc.Name)
	}
	log.FromContext(ctx).V(1).Info("Synced peer service", "etcd", client.ObjectKeyFromObject(etcd), "name", svc.Name, "result", result)
	return nil
}

// TriggerDelete deletes the Service.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	svc := emptyService(etcd)
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, svc),
		component.OperationDelete, kind, "deleting peer service %s", svc.Name)
}

// GetExistingResourceNames returns the Service's name when it exists.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyService(etcd))
	return names, component.WrapError(err, component.OperationGet, kind, "getting peer service")
}
