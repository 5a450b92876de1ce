// Package hostsfile is the local seed's DNS: every pod gets a hosts file (bind-mounted over its
// /etc/hosts) with its own name, its hostAliases, the FQDNs of pods behind headless services and the
// names of services, rewritten in place whenever pods, services or endpoints change.
//
// Services resolve to a ready endpoint's pod IP, not to their ClusterIP: without kube-proxy ClusterIPs do
// not route here.
//
// The endpoints of pods the seed runs are taken from the nodes' own knowledge (Cluster.Pods), not from
// EndpointSlices: a node publishes a pod before it reports the pod Ready, so whoever sees the pod Ready
// in the API can already resolve it from every pod. EndpointSlices would lag behind by the endpoint
// controller's round trip and show removed pods (whose address a new pod may already use) for a while.
// Slices still contribute endpoints that are not pods (the apiserver's `kubernetes` service, manual
// endpoints).
package hostsfile

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// ClusterDomain is the DNS suffix of the local seed's cluster.
const ClusterDomain = "cluster.local"

// Pod is what the hosts files depend on of one pod the seed runs.
type Pod struct {
	Namespace, Name string
	// Hostname and Subdomain are the pod's spec.hostname/spec.subdomain (hostname defaults to Name).
	Hostname, Subdomain string
	IP                  string
	Labels              map[string]string
	HostAliases         []corev1.HostAlias
	// Ready is the pod's Ready condition as its node is about to report it; Terminating is set once the
	// pod has a deletion timestamp.
	Ready, Terminating bool
	// Path is the hosts file.
	Path string
}

// Cluster is what hosts files are rendered from.
type Cluster struct {
	Services []*corev1.Service
	Slices   []*discoveryv1.EndpointSlice
	// Pods are all pods the seed runs (with a network), by UID.
	Pods map[types.UID]Pod
}

// Render returns the hosts file of pod.
func Render(pod Pod, c Cluster) []byte {
	var b strings.Builder
	b.WriteString("# Managed by the gardener-etcd local seed; rewritten when endpoints change.\n")
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	hostname := pod.Hostname
	if hostname == "" {
		hostname = pod.Name
	}
	if pod.Subdomain != "" {
		fqdn := fmt.Sprintf("%s.%s.%s.svc", hostname, pod.Subdomain, pod.Namespace)
		fmt.Fprintf(&b, "%s\t%s %s.%s %s\n", pod.IP, fqdn, fqdn, ClusterDomain, hostname)
	} else {
		fmt.Fprintf(&b, "%s\t%s\n", pod.IP, hostname)
	}
	for _, alias := range pod.HostAliases {
		if len(alias.Hostnames) > 0 {
			fmt.Fprintf(&b, "%s\t%s\n", alias.IP, strings.Join(alias.Hostnames, " "))
		}
	}
	b.WriteString("# services and headless-service pods\n")
	for _, line := range serviceLines(pod.Namespace, c) {
		b.WriteString(line)
	}
	return []byte(b.String())
}

// serviceLines renders, sorted for stable output, one line per service with endpoints (its lowest
// address) and, for headless services, one per endpoint with a hostname (the pods' FQDNs).
func serviceLines(podNamespace string, c Cluster) []string {
	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range c.Slices {
		if svc := s.Labels[discoveryv1.LabelServiceName]; svc != "" {
			bySvc[s.Namespace+"/"+svc] = append(bySvc[s.Namespace+"/"+svc], s)
		}
	}
	var lines []string
	for _, svc := range c.Services {
		eps := endpoints(svc, bySvc[svc.Namespace+"/"+svc.Name], c.Pods)
		if len(eps) == 0 {
			continue
		}
		names := []string{svc.Name + "." + svc.Namespace, svc.Name + "." + svc.Namespace + ".svc",
			svc.Name + "." + svc.Namespace + ".svc." + ClusterDomain}
		if svc.Namespace == podNamespace {
			names = append(names, svc.Name)
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\n", eps[0].address, strings.Join(names, " ")))
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			continue
		}
		for _, ep := range eps {
			if ep.hostname != "" {
				fqdn := fmt.Sprintf("%s.%s.%s.svc", ep.hostname, svc.Name, svc.Namespace)
				lines = append(lines, fmt.Sprintf("%s\t%s %s.%s\n", ep.address, fqdn, fqdn, ClusterDomain))
			}
		}
	}
	sort.Strings(lines)
	return lines
}

type endpoint struct{ address, hostname string }

// endpoints are the service's ready endpoints, sorted by address so that the address chosen for the
// service name is stable between rewrites: the seed's pods the service selects (ready and not
// terminating, or any with publishNotReadyAddresses, as the endpoint-slice controller decides) plus
// the ready slice endpoints that are not pods.
func endpoints(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, pods map[types.UID]Pod) []endpoint {
	seen := map[string]bool{}
	var eps []endpoint
	add := func(e endpoint) {
		if e.address != "" && !seen[e.address] {
			seen[e.address] = true
			eps = append(eps, e)
		}
	}
	if len(svc.Spec.Selector) > 0 {
		selector := labels.SelectorFromSet(svc.Spec.Selector)
		for _, p := range pods {
			if p.Namespace != svc.Namespace || !selector.Matches(labels.Set(p.Labels)) {
				continue
			}
			if !svc.Spec.PublishNotReadyAddresses && (!p.Ready || p.Terminating) {
				continue
			}
			e := endpoint{address: p.IP}
			if p.Subdomain == svc.Name {
				e.hostname = p.Hostname
			}
			add(e)
		}
	}
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, ep := range s.Endpoints {
			if (ep.TargetRef != nil && ep.TargetRef.Kind == "Pod") || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			for _, addr := range ep.Addresses {
				e := endpoint{address: addr}
				if ep.Hostname != nil {
					e.hostname = *ep.Hostname
				}
				add(e)
			}
		}
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].address < eps[j].address })
	return eps
}
