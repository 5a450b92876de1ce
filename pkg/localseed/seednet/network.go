package seednet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/go-logr/logr"
)

// subnetBase is the /16 from which every instance draws one /24. The host here uses 192.0.2.0/24; a
// candidate is also rejected when any host address or route overlaps it.
var subnetBase = netip.MustParsePrefix("10.234.0.0/16")

// Network is one instance's bridge and the address pool of the namespaces on it.
type Network struct {
	// Prefix names every link and namespace of this instance (at most 8 characters: interface names
	// are limited to 15).
	Prefix string
	// Bridge is the host bridge all namespaces' veths are attached to.
	Bridge string
	// Subnet is the bridge's subnet; Gateway is the host's address in it, reachable from every namespace.
	Subnet  netip.Prefix
	Gateway netip.Addr

	log      logr.Logger
	mu       sync.Mutex
	used     map[netip.Addr]bool
	nextVeth int
}

// BridgeName is the bridge name of an instance prefix.
func BridgeName(prefix string) string { return prefix + "br" }

// Create makes the bridge with a free /24 and brings it up.
func Create(ctx context.Context, log logr.Logger, prefix string) (*Network, error) {
	if len(prefix) > 8 {
		return nil, fmt.Errorf("prefix %q longer than 8 characters", prefix)
	}
	if err := CheckTools(); err != nil {
		return nil, err
	}
	n := &Network{Prefix: prefix, Bridge: BridgeName(prefix), log: log, used: map[netip.Addr]bool{}}
	// nf_call_* off: with br_netfilter loaded, bridged frames between namespaces would otherwise traverse the
	// host's iptables FORWARD chain, whose policy is often DROP; this bridge only carries local traffic.
	// The bridge's MAC is set explicitly: otherwise the kernel gives it the lowest MAC of its ports, so
	// the gateway's MAC would change as namespaces come and go and every namespace's ARP entry for it would go stale.
	if _, err := ip(ctx, "link", "add", n.Bridge, "address", bridgeMAC, "type", "bridge",
		"nf_call_iptables", "0", "nf_call_ip6tables", "0", "nf_call_arptables", "0"); err != nil {
		return nil, fmt.Errorf("creating bridge: %w", err)
	}
	for attempt := 0; ; attempt++ {
		if attempt == 20 {
			_ = n.Destroy(ctx)
			return nil, errors.New("no free /24 in " + subnetBase.String())
		}
		candidate := thirdOctetSubnet(byte(rand.IntN(256)))
		if overlapsHost(candidate) {
			continue
		}
		gateway := candidate.Addr().Next()
		if _, err := ip(ctx, "addr", "add", netip.PrefixFrom(gateway, 24).String(), "dev", n.Bridge); err != nil {
			_ = n.Destroy(ctx)
			return nil, fmt.Errorf("addressing bridge: %w", err)
		}
		// A concurrent instance may have picked the same /24 between our check and our add: both see
		// the overlap now, both retry with a new random choice.
		if overlapsOtherLink(candidate, n.Bridge) {
			_, _ = ip(ctx, "addr", "del", netip.PrefixFrom(gateway, 24).String(), "dev", n.Bridge)
			continue
		}
		n.Subnet, n.Gateway = candidate, gateway
		break
	}
	if _, err := ip(ctx, "link", "set", n.Bridge, "up"); err != nil {
		_ = n.Destroy(ctx)
		return nil, fmt.Errorf("bringing bridge up: %w", err)
	}
	n.used[n.Gateway] = true
	log.Info("Seed network created", "bridge", n.Bridge, "subnet", n.Subnet.String())
	return n, nil
}

// Overlaps reports whether candidate overlaps an address or route of the host, so that a range the seed
// picks never captures traffic meant for something else.
func Overlaps(candidate netip.Prefix) bool { return overlapsHost(candidate) }

// RouteVia routes dst through an address on the bridge (a node's); the route goes with the bridge.
func (n *Network) RouteVia(ctx context.Context, dst netip.Prefix, via netip.Addr) error {
	if _, err := ip(ctx, "route", "replace", dst.String(), "via", via.String(), "dev", n.Bridge); err != nil {
		return fmt.Errorf("routing %s via %s: %w", dst, via, err)
	}
	return nil
}

// RouteInNamespace routes dst through an address on the bridge (a node's) inside the namespace p, as the
// nodes route each other's pod ranges: the host does not forward between the bridge's members.
func (n *Network) RouteInNamespace(ctx context.Context, p *Namespace, dst netip.Prefix, via netip.Addr) error {
	if _, err := ip(ctx, "-n", p.NetNS, "route", "replace", dst.String(), "via", via.String(), "dev", "eth0"); err != nil {
		return fmt.Errorf("routing %s via %s in %s: %w", dst, via, p.NetNS, err)
	}
	return nil
}

// Destroy deletes the bridge (namespaces must have been removed first).
func (n *Network) Destroy(ctx context.Context) error {
	if _, err := ip(ctx, "link", "del", n.Bridge); err != nil && linkExists(n.Bridge) {
		return fmt.Errorf("deleting bridge: %w", err)
	}
	return nil
}

func (n *Network) allocate() (netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for a := n.Gateway.Next(); n.Subnet.Contains(a) && a != lastUsable(n.Subnet).Next(); a = a.Next() {
		if !n.used[a] {
			n.used[a] = true
			return a, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("seed subnet %s exhausted", n.Subnet)
}

func (n *Network) release(a netip.Addr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.used, a)
}

func (n *Network) vethName() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nextVeth++
	return fmt.Sprintf("%sv%d", n.Prefix, n.nextVeth)
}

func lastUsable(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	b[3] = 254
	return netip.AddrFrom4(b)
}

func overlapsHost(candidate netip.Prefix) bool {
	return overlapsOtherLink(candidate, "") || overlapsRoute(candidate)
}

// overlapsOtherLink reports whether an address of any interface but except lies in candidate.
func overlapsOtherLink(candidate netip.Prefix, except string) bool {
	ifaces, err := net.Interfaces()
	if err != nil {
		return true
	}
	for _, iface := range ifaces {
		if iface.Name == except {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err == nil && p.Overlaps(candidate) {
				return true
			}
		}
	}
	return false
}

func overlapsRoute(candidate netip.Prefix) bool {
	out, err := ip(context.Background(), "-4", "route", "show", "table", "all")
	if err != nil {
		return true
	}
	for _, dst := range routeDestinations(out) {
		if dst.Bits() > 0 && dst.Overlaps(candidate) {
			return true
		}
	}
	return false
}

func linkExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

func thirdOctetSubnet(third byte) netip.Prefix {
	b := subnetBase.Addr().As4()
	b[2] = third
	return netip.PrefixFrom(netip.AddrFrom4(b), 24)
}

// routeDestinations parses the destinations of `ip route show` output ("default" is skipped).
func routeDestinations(out string) []netip.Prefix {
	var dsts []netip.Prefix
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		first := fields[0]
		if first == "local" || first == "broadcast" || first == "unicast" {
			if len(fields) < 2 {
				continue
			}
			first = fields[1]
		}
		if !strings.Contains(first, "/") {
			first += "/32"
		}
		if p, err := netip.ParsePrefix(first); err == nil {
			dsts = append(dsts, p)
		}
	}
	return dsts
}
