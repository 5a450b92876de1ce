// Package clientservice manages the ClusterIP Service `<n>-client` through which kube-apiservers and other
// clients reach etcd (port `client`), members reach each other's peer port (`server`) and druid and Gardener
// reach the backup-restore sidecar (`backuprestore`).
package clientservice

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// The port names of the client Service; network policies and monitoring select them by name.
const (
	PortNameClient        = "client"
	PortNameServer        = "server"
	PortNameBackupRestore = "backuprestore"
)

// New returns the client Service operator. Annotations and labels of spec.etcd.clientService are added to
// the Service (the managed labels win on conflict); annotations others put on the Service are kept.
func New(c component.Clients) component.Operator {
	return &component.SingleObject[*corev1.Service]{
		Client:    c,
		Kind:      component.KindClientService,
		Component: druidv1alpha1.ComponentClientService,
		Empty: func(etcd *druidv1alpha1.Etcd) *corev1.Service {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.ClientServiceName(etcd), Namespace: etcd.Namespace}}
		},
		Desired: func(ctx context.Context, etcd *druidv1alpha1.Etcd, svc *corev1.Service) error {
			pods, err := component.PodSelector(ctx, c, etcd)
			mutate(svc, etcd, pods)
			return err
		},
	}
}

func mutate(svc *corev1.Service, etcd *druidv1alpha1.Etcd, pods map[string]string) {
	custom := etcd.Spec.Etcd.ClientService
	if custom == nil {
		custom = &druidv1alpha1.ClientService{}
	}
	for k, v := range custom.Labels {
		metav1.SetMetaDataLabel(&svc.ObjectMeta, k, v)
	}
	for k, v := range custom.Annotations {
		metav1.SetMetaDataAnnotation(&svc.ObjectMeta, k, v)
	}
	component.ApplyManagedMeta(svc, etcd, druidv1alpha1.ComponentClientService)

	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.Selector = pods
	svc.Spec.TrafficDistribution = custom.TrafficDistribution
	svc.Spec.Ports = []corev1.ServicePort{
		tcpPort(PortNameClient, *etcd.Spec.Etcd.ClientPort),
		tcpPort(PortNameServer, *etcd.Spec.Etcd.ServerPort),
		tcpPort(PortNameBackupRestore, *etcd.Spec.Backup.Port),
	}
}

// tcpPort spells out the fields the apiserver would default, so that a second Sync finds nothing to patch.
func tcpPort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}
}
