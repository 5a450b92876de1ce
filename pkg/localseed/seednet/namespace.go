package seednet

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
)

// netnsDir is where `ip netns add` bind-mounts named namespaces.
const netnsDir = "/run/netns"

// Namespace is a named network namespace attached to the bridge.
type Namespace struct {
	// NetNS is the namespace name; NetNSPath the file that holds it (for setns).
	NetNS     string
	NetNSPath string
	// HostVeth is the bridge-side end of the namespace's veth; the pod side is eth0.
	HostVeth string
	// IP is the namespace's address on the bridge.
	IP netip.Addr
}

// AddNamespace creates a namespace called `<prefix>-<id>` with loopback up, eth0 addressed from the pool
// (with the MAC derived from the address, see MAC) and a default route via the bridge.
func (n *Network) AddNamespace(ctx context.Context, id string) (*Namespace, error) {
	addr, err := n.allocate()
	if err != nil {
		return nil, err
	}
	p := &Namespace{NetNS: n.Prefix + "-" + id, HostVeth: n.vethName(), IP: addr}
	p.NetNSPath = filepath.Join(netnsDir, p.NetNS)
	steps := [][]string{
		{"netns", "add", p.NetNS},
		{"link", "add", p.HostVeth, "type", "veth", "peer", "name", "eth0", "address", MAC(addr), "netns", p.NetNS},
		{"link", "set", p.HostVeth, "master", n.Bridge, "up"},
		{"-n", p.NetNS, "link", "set", "lo", "up"},
		{"-n", p.NetNS, "addr", "add", netip.PrefixFrom(addr, n.Subnet.Bits()).String(), "dev", "eth0"},
		{"-n", p.NetNS, "link", "set", "eth0", "up"},
		{"-n", p.NetNS, "route", "add", "default", "via", n.Gateway.String()},
	}
	for _, step := range steps {
		if _, err := ip(ctx, step...); err != nil {
			_ = n.RemoveNamespace(context.WithoutCancel(ctx), p)
			return nil, fmt.Errorf("setting up network namespace %s: %w", id, err)
		}
	}
	n.log.V(1).Info("Network namespace added", "netns", p.NetNS, "ip", addr.String(), "veth", p.HostVeth)
	return p, nil
}

// RemoveNamespace deletes the namespace's veth and namespace and returns its address to the pool. Deleting the
// namespace also deletes eth0 and with it the host end; the explicit link delete covers a namespace
// still pinned by a lingering process.
func (n *Network) RemoveNamespace(ctx context.Context, p *Namespace) error {
	var errs []error
	if linkExists(p.HostVeth) {
		if _, err := ip(ctx, "link", "del", p.HostVeth); err != nil && linkExists(p.HostVeth) {
			errs = append(errs, err)
		}
	}
	if _, err := os.Stat(p.NetNSPath); err == nil {
		if _, err := ip(ctx, "netns", "del", p.NetNS); err != nil {
			errs = append(errs, err)
		}
	}
	n.release(p.IP)
	if len(errs) > 0 {
		return fmt.Errorf("removing the network of %s: %v", p.NetNS, errs)
	}
	return nil
}
