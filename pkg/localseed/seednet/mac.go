package seednet

import (
	"fmt"
	"net/netip"
)

// bridgeMAC is every instance's bridge address: only the bridge's own host and namespaces ever see it, so
// instances need not differ.
const bridgeMAC = "02:4c:53:00:00:01"

// MAC is the hardware address of the namespace interface with address a: locally administered, 02:4c, then
// the four address bytes.
//
// Addresses are reused as soon as a namespace is gone (a node of a seed that stopped, a test caller). With
// random MACs the host and the other namespaces would keep sending to the old MAC until their neighbour
// entries expire, 20-60 s of silence for the new one; with the MAC a function of the address, every cached entry stays right.
func MAC(a netip.Addr) string {
	b := a.As4()
	return fmt.Sprintf("02:4c:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3])
}
