package etcd

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// preferSameZoneSince is the first Kubernetes minor that serves trafficDistribution PreferSameZone, which
// deprecates PreferClose (the same behaviour under its new name).
const preferSameZoneSince = 34

// trafficDistribution is what the client Service's spec.trafficDistribution becomes (written on every
// Deploy, as Gardener's etcd component does): with topology-aware routing, clients (the kube-apiservers)
// prefer etcd members in their own zone, named as the seed's Kubernetes version names it — PreferSameZone
// from 1.34 on (pre-releases included), PreferClose before; nil without it.
func (v Values) trafficDistribution() (*string, error) {
	if !v.TopologyAwareRoutingEnabled {
		return nil, nil
	}
	if v.RuntimeKubernetesVersion == nil {
		return nil, errors.New("values: RuntimeKubernetesVersion is required with TopologyAwareRoutingEnabled: it decides between trafficDistribution PreferSameZone (Kubernetes 1.34 and later) and PreferClose")
	}
	version := v.RuntimeKubernetesVersion
	if version.Major() > 1 || version.Minor() >= preferSameZoneSince {
		return ptr.To(corev1.ServiceTrafficDistributionPreferSameZone), nil
	}
	return ptr.To(corev1.ServiceTrafficDistributionPreferClose), nil
}
