package kubeletnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
)

// Time limits of a node's processes.
const (
	startTimeout = 60 * time.Second
	stopGrace    = 10 * time.Second
)

// Node is a running node: containerd, kubelet, kube-proxy and, if configured, the NetworkPolicy agent.
type Node struct {
	cfg       Config
	processes []*namedProcess
}

type namedProcess struct {
	name string
	p    *proc.Process
}

// Start prepares the node's network namespace (forwarding, bridge netfilter for Services, routes to the
// other nodes' pods), writes the configurations and starts containerd, then the kubelet, kube-proxy and the
// NetworkPolicy agent (Config.NetworkPolicyKubeconfig).
// Registration and readiness are the apiserver's to report: callers wait for the Node to be Ready. On error
// everything started is stopped again.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg}
	if err := n.start(ctx); err != nil {
		return nil, errors.Join(err, n.Stop(context.WithoutCancel(ctx)))
	}
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	c := n.cfg
	for _, dir := range []string{c.path("logs"), c.path("pod-logs")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := n.prepareNetwork(ctx); err != nil {
		return err
	}
	if err := createCgroupRoot(c.Name); err != nil {
		return err
	}
	containerdConfig, err := c.writeContainerdFiles()
	if err != nil {
		return err
	}
	kubeletConfig, err := c.writeKubeletFiles()
	if err != nil {
		return err
	}
	kubeProxyConfig, err := c.writeKubeProxyConfig()
	if err != nil {
		return err
	}
	if err := n.run("containerd", "--config="+containerdConfig); err != nil {
		return err
	}
	if err := n.waitForSocket(ctx, c.containerdSocket()); err != nil {
		return err
	}
	if err := n.run("kubelet", c.kubeletArgs(kubeletConfig)...); err != nil {
		return err
	}
	if err := n.run("kube-proxy", "--config="+kubeProxyConfig); err != nil {
		return err
	}
	if c.NetworkPolicyKubeconfig == "" {
		return nil
	}
	return n.run(NetworkPolicyAgent, c.networkPolicyAgentArgs()...)
}

// prepareNetwork turns on what a node's network namespace needs beyond its address: forwarding between
// eth0 and the pods' bridge, bridged pod traffic through iptables (kube-proxy's replies to a pod on the
// same bridge must be de-NATed), and a route to every other node's pods through that node's address.
func (n *Node) prepareNetwork(ctx context.Context) error {
	c := n.cfg
	if err := n.inNetNS(ctx, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1"); err != nil {
		return err
	}
	for cidr, via := range c.PeerRoutes {
		if err := n.inNetNS(ctx, "ip", "route", "replace", cidr.String(), "via", via.String()); err != nil {
			return err
		}
	}
	return nil
}

// inNetNS runs a short command in the node's network namespace.
func (n *Node) inNetNS(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + n.cfg.NetNS, "--"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("node %s: %v: %w: %s", n.cfg.Name, args, err, out)
	}
	return nil
}

// run starts one of the node's binaries in its network namespace, logging to <state>/logs/<name>.log.
func (n *Node) run(name string, args ...string) error {
	binary := filepath.Join(n.cfg.BinDir, name)
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("%s not found in %s: run `make tools`", name, n.cfg.BinDir)
	}
	p, err := proc.Start(proc.Spec{
		Path: "nsenter", Args: append([]string{"--net=" + n.cfg.NetNS, "--", binary}, args...),
		Env:     append(os.Environ(), "PATH="+n.cfg.BinDir+":"+os.Getenv("PATH")),
		LogPath: n.LogPath(name),
	})
	if err != nil {
		return err
	}
	n.processes = append(n.processes, &namedProcess{name: name, p: p})
	n.cfg.Log.V(1).Info("Started", "process", name, "pid", p.Pid())
	return nil
}

// LogPath is where a process of the node (containerd, kubelet, kube-proxy) logs.
func (n *Node) LogPath(name string) string { return n.cfg.path("logs", name+".log") }

// waitForSocket waits until containerd accepts connections on its socket.
func (n *Node) waitForSocket(ctx context.Context, socket string) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	containerd := n.processes[len(n.processes)-1].p
	for {
		if conn, err := net.Dial("unix", socket); err == nil {
			_ = conn.Close()
			return nil
		}
		select {
		case <-containerd.Exited():
			return fmt.Errorf("node %s: containerd exited during start-up (code %d); see %s", n.cfg.Name, containerd.ExitCode(), n.LogPath("containerd"))
		case <-ctx.Done():
			return fmt.Errorf("node %s: containerd not serving after %s; see %s", n.cfg.Name, startTimeout, n.LogPath("containerd"))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops the NetworkPolicy agent (which deletes its nftables table), kube-proxy and the kubelet, then removes what they and containerd left: every container
// (their processes are in the node's cgroups, the shims in its network namespace), containerd itself,
// every mount below the state directory and the node's cgroups. It is idempotent; the network namespace
// and the state directory are the caller's.
func (n *Node) Stop(ctx context.Context) error {
	var errs []error
	for i := len(n.processes) - 1; i >= 0; i-- {
		if n.processes[i].name == "containerd" {
			continue // last: its containers go first, so nothing restarts or leaks them
		}
		if err := n.processes[i].p.Stop(stopGrace); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.processes[i].name, err))
		}
	}
	errs = append(errs, Cleanup(ctx, n.cfg.Name, n.cfg.NetNS, n.cfg.StateDir))
	for _, np := range n.processes {
		if np.name == "containerd" {
			_ = np.p.Stop(stopGrace) // already killed by Cleanup with the namespace's processes
		}
	}
	n.processes = nil
	return errors.Join(errs...)
}
