// Package peerservice manages the headless Service `<n>-peer` that gives every member the stable DNS name
// `<pod>.<n>-peer.<ns>.svc` used in the etcd peer URLs. It publishes not-ready addresses because members
// must find each other before any of them is ready (bootstrap, quorum loss).
package peerservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// PortNamePeer is the name of the peer Service's only port.
const PortNamePeer = "peer"

// New returns the peer Service operator. clusterIP None is set on creation only: it is immutable afterwards.
func New(c component.Clients) component.Operator {
	return &component.SingleObject[*corev1.Service]{
		Client:    c,
		Kind:      component.KindPeerService,
		Component: druidv1alpha1.ComponentPeerService,
		Empty: func(etcd *druidv1alpha1.Etcd) *corev1.Service {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.PeerServiceName(etcd), Namespace: etcd.Namespace}}
		},
		Desired: func(ctx context.Context, etcd *druidv1alpha1.Etcd, svc *corev1.Service) error {
			pods, err := component.PodSelector(ctx, c, etcd)
			if err != nil {
				return err
			}
			if svc.CreationTimestamp.IsZero() {
				svc.Spec.ClusterIP = corev1.ClusterIPNone
			}
			svc.Spec.Type = corev1.ServiceTypeClusterIP
			svc.Spec.PublishNotReadyAddresses = true
			svc.Spec.Selector = pods
			port := *etcd.Spec.Etcd.ServerPort
			svc.Spec.Ports = []corev1.ServicePort{{Name: PortNamePeer, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}}
			return nil
		},
	}
}
