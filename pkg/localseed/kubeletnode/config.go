package kubeletnode

import (
	"fmt"
	"net/netip"
	"path/filepath"

	"github.com/go-logr/logr"
)

// Config describes one node. The caller creates the network namespace (eth0 addressed with NodeIP, a
// default route to the host) and the credentials; the node creates everything else under StateDir.
type Config struct {
	// Name is the node's name; Zone its topology.kubernetes.io/zone label.
	Name, Zone string
	// BinDir holds kubelet, kube-proxy, containerd, containerd-shim-runc-v2, runc and the CNI plugins.
	BinDir string
	// StateDir is the node's own directory (containerd root and state, kubelet root, pod logs, CNI).
	StateDir string
	// NetNS is the path of the node's network namespace (e.g. /run/netns/<name>).
	NetNS string
	// NodeIP is the node's address (eth0 in NetNS); PodCIDR the range its pods get addresses from.
	NodeIP  netip.Addr
	PodCIDR netip.Prefix
	// PeerRoutes are the other nodes' pod ranges, reached directly through their node addresses.
	PeerRoutes map[netip.Prefix]netip.Addr
	// KubeletKubeconfig and KubeProxyKubeconfig hold the node's and kube-proxy's credentials.
	KubeletKubeconfig, KubeProxyKubeconfig string
	// NetworkPolicyKubeconfig, when set, starts NetworkPolicyAgent on the node with these credentials (it
	// reads pods, namespaces and NetworkPolicies); empty: the node enforces no NetworkPolicy.
	NetworkPolicyKubeconfig string
	// ClientCAFile verifies clients of the kubelet's API (the apiserver).
	ClientCAFile string
	// ClusterDNS is the DNS Service's address; ClusterDomain its domain (cluster.local).
	ClusterDNS    netip.Addr
	ClusterDomain string
	// ClusterCIDR covers every node's pod range (kube-proxy tells pod from outside traffic by it).
	ClusterCIDR netip.Prefix
	// PauseImage is the sandbox image (pulled by digest from Registry).
	PauseImage string
	// Registry is the plain-HTTP registry (host:port) the node pulls the seed's images from.
	Registry string
	// Log receives the node's own logs; the processes log to files under StateDir/logs.
	Log logr.Logger
}

func (c Config) validate() error {
	switch {
	case c.Name == "" || c.BinDir == "" || c.StateDir == "" || c.NetNS == "":
		return fmt.Errorf("node config: name, bin dir, state dir and network namespace are required")
	case !c.NodeIP.IsValid() || !c.PodCIDR.IsValid() || !c.ClusterDNS.IsValid() || !c.ClusterCIDR.IsValid():
		return fmt.Errorf("node %s: node IP, pod CIDR, cluster CIDR and cluster DNS are required", c.Name)
	case c.PauseImage == "":
		return fmt.Errorf("node %s: pause image is required", c.Name)
	}
	return nil
}

// Paths under StateDir.
func (c Config) path(elem ...string) string {
	return filepath.Join(append([]string{c.StateDir}, elem...)...)
}

// containerdSocket is containerd's API socket; the ttrpc socket is beside it with ".ttrpc".
func (c Config) containerdSocket() string { return filepath.Join(c.SocketDir(), "containerd.sock") }

// shimSocketDir holds the sockets of the node's shims, each this directory plus 65 characters.
func (c Config) shimSocketDir() string { return filepath.Join(c.SocketDir(), "s") }

// SocketDir holds the node's unix sockets (containerd's and its shims'). It is not below StateDir, which
// may be any long path: a unix socket path has at most 107 characters.
func (c Config) SocketDir() string { return filepath.Join(socketRoot, c.Name) }

// socketRoot is the parent of every node's socket directory.
const socketRoot = "/run/gardener-etcd"

// CgroupRoot is the node's cgroup parent: every pod cgroup of the node lives below it.
func (c Config) CgroupRoot() string { return "/" + c.Name }
