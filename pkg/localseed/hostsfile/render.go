// Package hostsfile is the local seed's DNS: every pod gets a hosts file (bind-mounted over its
// /etc/hosts) with its own name, its hostAliases, the FQDNs of pods behind headless services and the
// names of services, rewritten in place whenever services or endpoints change.
//
// Services resolve to a ready endpoint's pod IP, not to their ClusterIP: without kube-proxy ClusterIPs do
// not route here.
package hostsfile

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// ClusterDomain is the DNS suffix of the local seed's cluster.
const ClusterDomain = "cluster.local"

// Pod is what the hosts file of one pod depends on.
type Pod struct {
	Namespace, Name string
	// Hostname and Subdomain are the pod's spec.hostname/spec.subdomain (hostname defaults to Name).
	Hostname, Subdomain string
	IP                  string
	HostAliases         []corev1.HostAlias
	// Path is the hosts file.
	Path string
}

// Render returns the hosts file of pod given the cluster's services and endpoint slices.
func Render(pod Pod, services []*corev1.Service, slices []*discoveryv1.EndpointSlice) []byte {
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
	for _, line := range serviceLines(pod.Namespace, services, slices) {
		b.WriteString(line)
	}
	return []byte(b.String())
}

// serviceLines renders, sorted for stable output, one line per service (first ready endpoint) and one
// per named endpoint of a service (headless pods).
func serviceLines(podNamespace string, services []*corev1.Service, slices []*discoveryv1.EndpointSlice) []string {
	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range slices {
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc != "" {
			bySvc[s.Namespace+"/"+svc] = append(bySvc[s.Namespace+"/"+svc], s)
		}
	}
	var lines []string
	for _, svc := range services {
		ready := readyEndpoints(bySvc[svc.Namespace+"/"+svc.Name])
		if len(ready) == 0 {
			continue
		}
		names := []string{svc.Name + "." + svc.Namespace, svc.Name + "." + svc.Namespace + ".svc",
			svc.Name + "." + svc.Namespace + ".svc." + ClusterDomain}
		if svc.Namespace == podNamespace {
			names = append(names, svc.Name)
		}
		lines = append(lines, fmt.Sprintf("%s\t%s\n", ready[0].address, strings.Join(names, " ")))
		for _, ep := range ready {
			if ep.hostname == "" {
				continue
			}
			fqdn := fmt.Sprintf("%s.%s.%s.svc", ep.hostname, svc.Name, svc.Namespace)
			lines = append(lines, fmt.Sprintf("%s\t%s %s.%s\n", ep.address, fqdn, fqdn, ClusterDomain))
		}
	}
	sort.Strings(lines)
	return lines
}

type endpoint struct{ address, hostname string }

// readyEndpoints lists the ready addresses of a service's slices, deduplicated and sorted so that the
// chosen service address is stable between rewrites.
func readyEndpoints(slices []*discoveryv1.EndpointSlice) []endpoint {
	seen := map[string]bool{}
	var eps []endpoint
	for _, s := range slices {
		if s.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, addr := range ep.Addresses {
				if seen[addr] {
					continue
				}
				seen[addr] = true
				e := endpoint{address: addr}
				if ep.Hostname != nil {
					e.hostname = *ep.Hostname
				}
				eps = append(eps, e)
			}
		}
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].address < eps[j].address })
	return eps
}
