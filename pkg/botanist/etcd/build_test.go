package etcd

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// built is the Etcd build writes for values over existing (nil: a new Etcd) with a plan of replicas members.
func built(values Values, existing *druidv1alpha1.Etcd, replicas int32) *druidv1alpha1.Etcd {
	e := New(nil, "shoot--p--s", values).(*etcd)
	p := plan{replicas: replicas, peerTLS: needsPeerTLS(existing, e.values.HighAvailability, replicas), defragmentation: "0 22 * * *", fullSnapshot: "30 22 * * *"}
	return e.build(existing, p)
}

func resources(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// Every etcd pod may reach the seed's kube-apiserver (druid's sidecar leases and member status need it);
// in a Gardener seed that traffic is denied unless the pod carries the label.
func TestBuildLabelsThePodsForTheRuntimeAPIServer(t *testing.T) {
	g := NewWithT(t)
	for _, role := range []string{RoleMain, RoleEvents} {
		obj := built(Values{Role: role}, nil, 1)
		g.Expect(obj.Spec.Labels).To(HaveKeyWithValue("networking.gardener.cloud/to-runtime-apiserver", "allowed"), role)
		g.Expect(obj.Spec.Labels).NotTo(HaveKey(ContainSubstring("to-etcd-")), "a single member has no peers")
	}
}

// Members of a multi-member etcd talk to each other on the client, peer and sidecar ports; Gardener's
// resource manager opens that traffic for pods with these labels.
func TestBuildLabelsPeersOfAMultiMemberEtcd(t *testing.T) {
	g := NewWithT(t)
	obj := built(Values{Role: RoleEvents, HighAvailability: true}, nil, 3)
	for _, port := range []string{"2379", "2380", "8080"} {
		g.Expect(obj.Spec.Labels).To(HaveKeyWithValue("networking.resources.gardener.cloud/to-etcd-events-client-tcp-"+port, "allowed"))
	}
}

// The client Service lets the seed's Prometheus (garden namespace) scrape etcd and the sidecar, and lets
// the shoot namespaces' kube-apiservers reach it through the all-shoots alias.
func TestBuildAnnotatesTheClientServiceForGardenersNetworkPolicies(t *testing.T) {
	g := NewWithT(t)
	obj := built(Values{Role: RoleMain}, nil, 1)
	g.Expect(obj.Spec.Etcd.ClientService).NotTo(BeNil())
	g.Expect(obj.Spec.Etcd.ClientService.Annotations).To(Equal(map[string]string{
		"networking.resources.gardener.cloud/from-all-scrape-targets-allowed-ports": `[{"protocol":"TCP","port":2379},{"protocol":"TCP","port":8080}]`,
		"networking.resources.gardener.cloud/namespace-selectors":                   `[{"matchLabels":{"kubernetes.io/metadata.name":"garden"}}]`,
		"networking.resources.gardener.cloud/pod-label-selector-namespace-alias":    "all-shoots",
	}))
}

// etcd-events (class normal) may lose an unhealthy member to an eviction (druid relaxes its
// PodDisruptionBudget); a single-member etcd-main (important, not highly available) must not be evicted by
// the cluster-autoscaler, since that is an outage of the shoot's API.
func TestBuildAnnotatesEvictionByClassAndAvailability(t *testing.T) {
	g := NewWithT(t)
	events := built(Values{Role: RoleEvents}, nil, 1)
	g.Expect(events.Annotations).To(HaveKeyWithValue(druidv1alpha1.AllowUnhealthyPodEvictionAnnotation, ""))
	g.Expect(events.Spec.Annotations).NotTo(HaveKey("cluster-autoscaler.kubernetes.io/safe-to-evict"))

	main := built(Values{Role: RoleMain}, nil, 1)
	g.Expect(main.Annotations).NotTo(HaveKey(druidv1alpha1.AllowUnhealthyPodEvictionAnnotation))
	g.Expect(main.Spec.Annotations).To(HaveKeyWithValue("cluster-autoscaler.kubernetes.io/safe-to-evict", "false"))

	// Becoming highly available, three members tolerate the eviction of one: the annotation goes.
	ha := built(Values{Role: RoleMain, HighAvailability: true}, main, 3)
	g.Expect(ha.Spec.Annotations).NotTo(HaveKey("cluster-autoscaler.kubernetes.io/safe-to-evict"))
}

// Gardener's requests: the class's default or the VPA's floor, whichever is higher, written on every
// Deploy; extensive metrics for the important etcd.
func TestBuildRequestsAndMetricsByClass(t *testing.T) {
	g := NewWithT(t)
	events := built(Values{Role: RoleEvents}, nil, 1)
	g.Expect(events.Spec.Etcd.Resources.Requests).To(BeComparableTo(resources("cpu", "30m", "memory", "150M")))
	g.Expect(events.Spec.Etcd.Metrics).To(HaveValue(Equal(druidv1alpha1.Basic)))
	main := built(Values{Role: RoleMain}, nil, 1)
	g.Expect(main.Spec.Etcd.Resources.Requests).To(BeComparableTo(resources("cpu", "150m", "memory", "500M")))
	g.Expect(main.Spec.Etcd.Metrics).To(HaveValue(Equal(druidv1alpha1.Extensive)))

	// A raised floor raises the requests; what was on the object does not survive.
	existing := main.DeepCopy()
	existing.Spec.Etcd.Resources.Requests = resources("memory", "123Mi")
	raised := built(Values{Role: RoleMain, MinAllowed: resources("memory", "1Gi")}, existing, 1)
	g.Expect(raised.Spec.Etcd.Resources.Requests).To(BeComparableTo(resources("cpu", "150m", "memory", "1Gi")))
	g.Expect(built(Values{Role: RoleMain}, existing, 1).Spec.Etcd.Resources.Requests).To(BeComparableTo(resources("cpu", "150m", "memory", "500M")))
}

// Gardener's PVC template: <role>-etcd for an important etcd (the volumes it had before druid), the Etcd
// name for a normal one. Only a new Etcd gets it: an existing one keeps its template, whose name its
// members' PVCs carry.
func TestBuildNamesTheClaimTemplateByClassOnNewEtcdsOnly(t *testing.T) {
	g := NewWithT(t)
	g.Expect(built(Values{Role: RoleMain}, nil, 1).Spec.VolumeClaimTemplate).To(HaveValue(Equal("main-etcd")))
	events := built(Values{Role: RoleEvents}, nil, 1)
	g.Expect(events.Spec.VolumeClaimTemplate).To(HaveValue(Equal("etcd-events")))

	events.Spec.VolumeClaimTemplate = ptr.To("events-etcd")
	g.Expect(built(Values{Role: RoleEvents}, events, 1).Spec.VolumeClaimTemplate).To(HaveValue(Equal("events-etcd")))
}
