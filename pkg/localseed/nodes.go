package localseed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/kubeletnode"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/seednet"
)

// NodeTools are the binaries of `make tools` the nodes run, besides the control plane's.
var NodeTools = []string{"kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "runc", "bridge", "host-local",
	"loopback", "portmap", "registry", "coredns"}

// maxStateDirLen bounds the state directory's path: the longest unix socket a kubelet makes below it,
// <state>/nodes/<prefix>-node-a/kubelet/pod-resources/<10 digits>, must stay within 107 characters.
const maxStateDirLen = 107 - len("/nodes/ls12345-node-a/kubelet/pod-resources/1234567890") - 8

// maxNodes bounds the nodes of a seed: each gets a /24 of the instance's /16 pod range, numbered from 0.
const maxNodes = 26

// nodeReadyTimeout bounds the wait for every node and the cluster DNS to be Ready.
const nodeReadyTimeout = 3 * time.Minute

// seedNode is one running node and the network namespace the seed made for it.
type seedNode struct {
	name    string
	netns   *seednet.Namespace
	podCIDR netip.Prefix
	node    *kubeletnode.Node
}

// startNodes brings up the registry, the seed's own images, one node per Options.Nodes (network
// namespace on the bridge, pod range routed to it, with a NetworkPolicy agent if Options.NetworkPolicies)
// and CoreDNS, and waits until all are Ready.
func (s *Seed) startNodes(ctx context.Context) error {
	log := s.opts.Log.WithValues("seed", s.prefix)
	begin := time.Now()
	if err := s.startRegistry(ctx); err != nil {
		return err
	}
	images, err := s.pushSeedImages(ctx)
	if err != nil {
		return err
	}
	log.Info("Registry ready with the seed's images", "registry", s.Registry(), "duration", time.Since(begin).String())
	podRange, err := choosePodRange()
	if err != nil {
		return err
	}
	server := s.restConfig.Host
	proxyKubeconfig, err := s.cp.pki.clientKubeconfig("kube-proxy", server, "system:kube-proxy")
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(s.restConfig)
	if err != nil {
		return err
	}
	var networkPolicyKubeconfig string
	if s.opts.NetworkPolicies {
		if err := grantNetworkPolicyAgent(ctx, client); err != nil {
			return err
		}
		if networkPolicyKubeconfig, err = s.cp.pki.clientKubeconfig("kube-network-policies", server, networkPolicyAgentUser); err != nil {
			return err
		}
	}
	type planned struct {
		name    string
		netns   *seednet.Namespace
		podCIDR netip.Prefix
	}
	var plan []planned
	for i := range s.opts.Nodes {
		name := s.nodeName(i)
		netns, err := s.network.AddNamespace(ctx, fmt.Sprintf("node-%c", 'a'+i))
		if err != nil {
			return err
		}
		podCIDR := nodePodCIDR(podRange, i)
		s.nodes = append(s.nodes, &seedNode{name: name, netns: netns, podCIDR: podCIDR})
		s.nodeNames = append(s.nodeNames, name)
		if err := s.network.RouteVia(ctx, podCIDR, netns.IP); err != nil {
			return err
		}
		plan = append(plan, planned{name: name, netns: netns, podCIDR: podCIDR})
	}
	if err := kubeletnode.HostKernelTunables.Acquire(s.stateDir); err != nil {
		return err
	}
	for i, p := range plan {
		kubeconfig, err := s.cp.pki.clientKubeconfig("kubelet-"+p.name, server, "system:node:"+p.name, "system:nodes")
		if err != nil {
			return err
		}
		peers := map[netip.Prefix]netip.Addr{}
		for _, other := range plan {
			if other.name != p.name {
				peers[other.podCIDR] = other.netns.IP
			}
		}
		node, err := kubeletnode.Start(ctx, kubeletnode.Config{
			Name: p.name, Zone: string(rune('a' + i)), BinDir: s.opts.BinDir,
			StateDir: filepath.Join(s.stateDir, "nodes", p.name), NetNS: p.netns.NetNSPath,
			NodeIP: p.netns.IP, PodCIDR: p.podCIDR, PeerRoutes: peers, ClusterCIDR: podRange,
			KubeletKubeconfig: kubeconfig, KubeProxyKubeconfig: proxyKubeconfig, NetworkPolicyKubeconfig: networkPolicyKubeconfig,
			ClientCAFile: s.cp.pki.caCert,
			ClusterDNS:   netip.MustParseAddr(clusterDNSIP), ClusterDomain: clusterDomain,
			PauseImage: images["pause"], Registry: s.Registry(), Log: log.WithValues("node", p.name),
		})
		if err != nil {
			return err
		}
		s.nodes[i].node = node
	}
	if err := s.startInformers(ctx, client); err != nil {
		return err
	}
	if s.opts.NetworkPolicies {
		if err := s.startGardenerPolicies(podRange); err != nil {
			return err
		}
	}
	if err := deployClusterDNS(ctx, client, images["coredns"]); err != nil {
		return err
	}
	if err := s.waitNodesReady(ctx, client); err != nil {
		return err
	}
	log.Info("Nodes ready", "nodes", s.nodeNames, "podRange", podRange.String(), "duration", time.Since(begin).String())
	return nil
}

// waitNodesReady waits until every node reports Ready and CoreDNS is available.
func (s *Seed) waitNodesReady(ctx context.Context, client kubernetes.Interface) error {
	var lastReason string
	var notReady *seedNode
	err := wait.PollUntilContextTimeout(ctx, time.Second, nodeReadyTimeout, true, func(ctx context.Context) (bool, error) {
		for _, n := range s.nodes {
			node, err := client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
			if err != nil {
				lastReason, notReady = fmt.Sprintf("node %s: %v", n.name, err), n
				return false, nil
			}
			if !NodeReady(node) {
				lastReason, notReady = fmt.Sprintf("node %s not Ready", n.name), n
				return false, nil
			}
		}
		notReady = nil
		dns, err := client.AppsV1().Deployments(metav1.NamespaceSystem).Get(ctx, dnsName, metav1.GetOptions{})
		if err != nil || dns.Status.AvailableReplicas < 1 {
			lastReason = "CoreDNS not available"
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		err = fmt.Errorf("nodes not ready after %s (%s); logs under %s", nodeReadyTimeout, lastReason, filepath.Join(s.stateDir, "nodes"))
		if notReady != nil && notReady.node != nil {
			err = fmt.Errorf("%w; the end of node %s's kubelet log:\n%s", err, notReady.name, logTail(notReady.node.LogPath("kubelet"), nodeLogTailBytes))
		}
		return err
	}
	return nil
}

// nodeLogTailBytes is how much of a node's kubelet log an error quotes.
const nodeLogTailBytes = 4 << 10

// NodeReady reports whether the node's kubelet says it is Ready.
func NodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// stopNodes stops every node (its pods, containerd, kubelet, kube-proxy, mounts and cgroups) and
// removes its network namespace.
func (s *Seed) stopNodes(ctx context.Context) error {
	var errs []error
	for i := len(s.nodes) - 1; i >= 0; i-- {
		n := s.nodes[i]
		if n.node != nil {
			if err := n.node.Stop(ctx); err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", n.name, err))
			}
		} else if err := kubeletnode.Cleanup(ctx, n.name, n.netns.NetNSPath, filepath.Join(s.stateDir, "nodes", n.name)); err != nil {
			errs = append(errs, err)
		}
		if err := s.network.RemoveNamespace(ctx, n.netns); err != nil {
			errs = append(errs, err)
		}
	}
	s.nodes = nil
	if err := kubeletnode.HostKernelTunables.Release(s.stateDir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// choosePodRange picks the instance's pod range: a /16 of 10.0.0.0/8 that no host address or route
// overlaps (the seed routes it to its nodes, so a second instance sees it taken).
func choosePodRange() (netip.Prefix, error) {
	for range 50 {
		candidate := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(100 + rand.IntN(130)), 0, 0}), 16)
		if !seednet.Overlaps(candidate) {
			return candidate, nil
		}
	}
	return netip.Prefix{}, errors.New("no free /16 for pods in 10.100.0.0-10.229.255.255")
}

// nodePodCIDR is node i's /24 of the pod range.
func nodePodCIDR(podRange netip.Prefix, i int) netip.Prefix {
	b := podRange.Addr().As4()
	b[2] = byte(i)
	return netip.PrefixFrom(netip.AddrFrom4(b), 24)
}

// LogDirs are the directories that hold the seed's logs: the control plane's, registry's and S3 server's
// (<state>/logs) and, per node, its components' (nodes/<node>/logs) and its pods' (nodes/<node>/pod-logs,
// as the kubelet writes them: <namespace>_<pod>_<uid>/<container>/<restart>.log).
func (s *Seed) LogDirs() []string {
	dirs := []string{filepath.Join(s.stateDir, "logs")}
	for _, name := range s.nodeNames {
		dirs = append(dirs, filepath.Join(s.stateDir, "nodes", name, "logs"), filepath.Join(s.stateDir, "nodes", name, "pod-logs"))
	}
	return dirs
}

// PodLogDirs are the log directories of namespace's pods on every node, one per pod.
func (s *Seed) PodLogDirs(namespace string) []string {
	dirs, _ := filepath.Glob(filepath.Join(s.stateDir, "nodes", "*", "pod-logs", namespace+"_*"))
	return dirs
}

// StopNode stops one running node as a machine that is lost looks to the cluster: its pods' containers,
// containerd, kubelet and kube-proxy go, and nothing reports for the node any more. Its Node object stays
// (deleting it is the caller's part, as a cloud controller does for a machine that is gone); its network
// namespace stays until the seed stops.
func (s *Seed) StopNode(ctx context.Context, name string) error {
	for _, n := range s.nodes {
		if n.name != name || n.node == nil {
			continue
		}
		err := n.node.Stop(ctx)
		n.node = nil // stopNodes cleans up again without it
		return err
	}
	return fmt.Errorf("no running node %s in the seed", name)
}
