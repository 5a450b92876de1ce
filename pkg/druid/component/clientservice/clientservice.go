// Package clientservice manages the ClusterIP Service `<n>-client` through which kube-apiservers and other
// clients reach etcd (port `client`), members reach each other's peer port (`server`) and druid and Gardener
// reach the backup-restore sidecar (`backuprestore`).
package clientservice

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

const kind = component.KindClientService

// The port names of the client Service; network policies and monitoring select them by name.
const (
	PortNameClient        = "client"
	PortNameServer        = "server"
	PortNameBackupRestore = "backuprestore"
)

type operator struct {
	client client.Client
}

// New returns the client Service operator.
func New(c client.Client) component.Operator {
	return &operator{client: c}
}

func emptyService(etcd *druidv1alpha1.Etcd) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: etcd.ClientServiceName(), Namespace: etcd.Namespace}}
}

// Sync creates or patches the Service. Annotations and labels of spec.etcd.clientService are added to the
// Service (the managed labels win on conflict); annotations others put on the Service are kept.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	svc := emptyService(etcd)
	result, err := controllerutil.CreateOrPatch(ctx, o.client, svc, func() error {
		mutate(svc, etcd)
		return nil
	})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "syncing client service %s", svc.Name)
	}
	log.FromContext(ctx).V(1).Info("Synced client service", "etcd", client.ObjectKeyFromObject(etcd), "name", svc.Name, "result", result)
	return nil
}

func mutate(svc *corev1.Service, etcd *druidv1alpha1.Etcd) {
	custom := etcd.Spec.Etcd.ClientService
	if custom == nil {
		custom = &druidv1alpha1.ClientService{}
	}
	svc.Labels = mergeInto(svc.Labels, custom.Labels)
	svc.Annotations = mergeInto(svc.Annotations, custom.Annotations)
	component.ApplyManagedMeta(svc, etcd, druidv1alpha1.ComponentClientService)

	svc.Spec.Type = corev1.ServiceTypeClusterIP
	svc.Spec.Selector = etcd.ManagedLabels()
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

func mergeInto(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]string, len(src))
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// TriggerDelete deletes the Service.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	svc := emptyService(etcd)
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, svc),
		component.OperationDelete, kind, "deleting client service %s", svc.Name)
}

// GetExistingResourceNames returns the Service's name when it exists.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyService(etcd))
	return names, component.WrapError(err, component.OperationGet, kind, "getting client service")
}
