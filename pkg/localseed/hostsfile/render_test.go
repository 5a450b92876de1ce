package hostsfile

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// member is a StatefulSet pod behind the headless service "peer" (and the ClusterIP service "client").
func member(name, ip string, ready bool) Pod {
	return Pod{Namespace: "shoot", Name: name, Hostname: name, Subdomain: "peer", IP: ip, Ready: ready,
		Labels: map[string]string{"app": "etcd"}}
}

func service(name, clusterIP string, publishNotReady bool) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shoot"}, Spec: corev1.ServiceSpec{
		ClusterIP: clusterIP, Selector: map[string]string{"app": "etcd"}, PublishNotReadyAddresses: publishNotReady}}
}

func lines(b []byte) map[string]bool {
	set := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		set[l] = true
	}
	return set
}

func TestRender(t *testing.T) {
	self := member("etcd-0", "10.0.0.2", true)
	self.HostAliases = []corev1.HostAlias{{IP: "10.0.0.100", Hostnames: []string{"backup.example", "s3.example"}}, {IP: "10.0.0.101"}}
	pods := map[types.UID]Pod{
		"0": self,
		"1": member("etcd-1", "10.0.0.3", true),
		"2": member("etcd-2", "10.0.0.4", false),
		"t": func() Pod { p := member("etcd-3", "10.0.0.5", true); p.Terminating = true; return p }(),
		"o": {Namespace: "other", Name: "x", IP: "10.0.0.9", Ready: true, Labels: map[string]string{"app": "etcd"}},
	}
	kubernetes := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1"}}
	apiserverSlice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	// A stale slice still lists a deleted pod: the seed's own knowledge wins over it.
	staleSlice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "client-x", Namespace: "shoot", Labels: map[string]string{discoveryv1.LabelServiceName: "client"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.50"}, Hostname: ptr.To("gone"),
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "gone", UID: "deleted"}}},
	}
	c := Cluster{
		Services: []*corev1.Service{service("peer", corev1.ClusterIPNone, false), service("client", "10.96.0.10", false), kubernetes},
		Slices:   []*discoveryv1.EndpointSlice{apiserverSlice, staleSlice},
		Pods:     pods,
	}
	got := lines(Render(self, c))
	for _, want := range []string{
		"127.0.0.1\tlocalhost",
		"10.0.0.2\tetcd-0.peer.shoot.svc etcd-0.peer.shoot.svc.cluster.local etcd-0",
		"10.0.0.100\tbackup.example s3.example",
		// Ready members of the headless service by FQDN.
		"10.0.0.3\tetcd-1.peer.shoot.svc etcd-1.peer.shoot.svc.cluster.local",
		// Service names resolve to the lowest ready endpoint; same-namespace services also by short name.
		"10.0.0.2\tpeer.shoot peer.shoot.svc peer.shoot.svc.cluster.local peer",
		"10.0.0.2\tclient.shoot client.shoot.svc client.shoot.svc.cluster.local client",
		"10.0.0.1\tkubernetes.default kubernetes.default.svc kubernetes.default.svc.cluster.local",
	} {
		if !got[want] {
			t.Errorf("missing line %q in\n%s", want, Render(self, c))
		}
	}
	for _, absent := range []string{"10.0.0.4", "10.0.0.5", "10.0.0.9", "10.0.0.50", "10.0.0.101", "etcd-0.client"} {
		if strings.Contains(string(Render(self, c)), absent) {
			t.Errorf("%s must not appear (not ready, terminating, other namespace, stale slice, alias without names, FQDN of a ClusterIP service):\n%s",
				absent, Render(self, c))
		}
	}
}

// TestRenderPublishNotReady: etcd peers must resolve each other before they are Ready (they become
// Ready only once the cluster formed), which their headless service allows with publishNotReadyAddresses.
func TestRenderPublishNotReady(t *testing.T) {
	self := member("etcd-0", "10.0.0.2", false)
	terminating := member("etcd-1", "10.0.0.3", false)
	terminating.Terminating = true
	c := Cluster{Services: []*corev1.Service{service("peer", corev1.ClusterIPNone, true)},
		Pods: map[types.UID]Pod{"0": self, "1": terminating, "2": member("etcd-2", "10.0.0.4", false)}}
	got := lines(Render(self, c))
	for _, want := range []string{
		"10.0.0.2\tetcd-0.peer.shoot.svc etcd-0.peer.shoot.svc.cluster.local",
		"10.0.0.3\tetcd-1.peer.shoot.svc etcd-1.peer.shoot.svc.cluster.local",
		"10.0.0.4\tetcd-2.peer.shoot.svc etcd-2.peer.shoot.svc.cluster.local",
	} {
		if !got[want] {
			t.Errorf("missing line %q in\n%s", want, Render(self, c))
		}
	}
}

// TestRenderNoEndpoints: a service without ready endpoints has no line, so lookups fail instead of
// reaching a pod that is not ready.
func TestRenderNoEndpoints(t *testing.T) {
	self := Pod{Namespace: "shoot", Name: "client", IP: "10.0.0.7"}
	c := Cluster{Services: []*corev1.Service{service("peer", corev1.ClusterIPNone, false)},
		Pods: map[types.UID]Pod{"0": self, "1": member("etcd-1", "10.0.0.3", false)}}
	out := string(Render(self, c))
	if strings.Contains(out, "peer") || !strings.Contains(out, "10.0.0.7\tclient\n") {
		t.Fatalf("unexpected hosts file:\n%s", out)
	}
}

// TestRenderStable: the same cluster renders the same bytes whatever the map order, so unchanged files
// are not rewritten.
func TestRenderStable(t *testing.T) {
	pods := map[types.UID]Pod{}
	for i, ip := range []string{"10.0.0.9", "10.0.0.3", "10.0.0.5", "10.0.0.4"} {
		pods[types.UID(ip)] = member("etcd-"+string(rune('a'+i)), ip, true)
	}
	c := Cluster{Services: []*corev1.Service{service("peer", corev1.ClusterIPNone, false)}, Pods: pods}
	first := string(Render(pods["10.0.0.3"], c))
	for range 20 {
		if again := string(Render(pods["10.0.0.3"], c)); again != first {
			t.Fatalf("render not stable:\n%s\nvs\n%s", first, again)
		}
	}
	if !strings.Contains(first, "10.0.0.3\tpeer.shoot") {
		t.Fatalf("service name must resolve to the lowest address:\n%s", first)
	}
}
