package main

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/google/nftables/xt"
	"golang.org/x/sys/unix"
)

// queueTable is the nftables table of the queueing rules this command installs instead of upstream's.
//
// Upstream's controller sends packets to its NFQUEUE with nftables' native queue expression (nft_queue).
// Kernels built without CONFIG_NFT_QUEUE refuse that rule ("netlink receive: no such file or directory")
// and upstream's table then never exists, so nothing would be enforced. The xtables NFQUEUE target, which
// iptables uses and nftables can run through its compatibility expression (nft_compat), is built into far
// more kernels. This table uses it: the same hook and priority as upstream's chain, the same exceptions
// (established connections, root's own sockets in the node's namespace), and every new connection from or
// to the node's pod range is queued — upstream narrows that to the pods a policy selects; the controller
// judges any packet by the policies (a pod no policy selects is allowed), so the verdicts are the same
// and only more of them are made in user space.
const queueTable = "kube-network-policies-queue"

// installQueueRules (re)creates queueTable in the current network namespace.
func installQueueRules(podCIDR netip.Prefix, queueID uint16, failOpen bool) error {
	if !podCIDR.Addr().Is4() {
		return fmt.Errorf("--pod-cidr %s: only IPv4 is supported", podCIDR)
	}
	conn, err := nftables.New()
	if err != nil {
		return err
	}
	table := &nftables.Table{Name: queueTable, Family: nftables.TableFamilyIPv4}
	conn.AddTable(table) // add + delete + add: starts from an empty table whether or not one was left
	conn.DelTable(table)
	conn.AddTable(table)
	chain := conn.AddChain(&nftables.Chain{
		Name: "postrouting", Table: table, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookPostrouting,
		Priority: nftables.ChainPriorityRef(*nftables.ChainPriorityNATSource - 5),
	})
	accept := &expr.Verdict{Kind: expr.VerdictAccept}
	rules := [][]expr.Any{
		{ // ct state established,related accept
			&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
			&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
				Mask: binaryutil.NativeEndian.PutUint32(expr.CtStateBitESTABLISHED | expr.CtStateBitRELATED), Xor: make([]byte, 4)},
			&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: make([]byte, 4)},
			accept,
		},
		{ // meta skuid 0 accept: the kubelet's probes and the node's own daemons
			&expr.Meta{Key: expr.MetaKeySKUID, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: make([]byte, 4)},
			accept,
		},
		append(inPrefix(12, podCIDR), nfqueue(queueID, failOpen)), // ip saddr <pod range> queue
		append(inPrefix(16, podCIDR), nfqueue(queueID, failOpen)), // ip daddr <pod range> queue
	}
	for _, exprs := range rules {
		conn.AddRule(&nftables.Rule{Table: table, Chain: chain, Exprs: exprs})
	}
	if err := conn.Flush(); err != nil {
		return fmt.Errorf("installing the nftables table %s: %w", queueTable, err)
	}
	return nil
}

// removeQueueRules deletes queueTable, so that no packet waits for a queue nobody reads.
func removeQueueRules() error {
	conn, err := nftables.New()
	if err != nil {
		return err
	}
	table := &nftables.Table{Name: queueTable, Family: nftables.TableFamilyIPv4}
	conn.AddTable(table) // add + delete: no error if it is already gone
	conn.DelTable(table)
	return conn.Flush()
}

// inPrefix matches an IPv4 address at offset of the network header (12 source, 16 destination) in prefix.
func inPrefix(offset uint32, prefix netip.Prefix) []expr.Any {
	mask := make([]byte, 4)
	binary.BigEndian.PutUint32(mask, ^uint32(0)<<(32-prefix.Bits()))
	addr := prefix.Masked().Addr().As4()
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: addr[:]},
	}
}

// nfqueue is the xtables NFQUEUE target, revision 3 (struct xt_NFQ_info_v3: queue number, number of
// queues, flags; host byte order). With failOpen the kernel accepts packets while no agent reads the
// queue (NFQ_FLAG_BYPASS); otherwise it drops them.
func nfqueue(queueID uint16, failOpen bool) expr.Any {
	const flagBypass = 0x01
	info := make([]byte, 6)
	binary.NativeEndian.PutUint16(info[0:], queueID)
	binary.NativeEndian.PutUint16(info[2:], 1)
	if failOpen {
		binary.NativeEndian.PutUint16(info[4:], flagBypass)
	}
	unknown := xt.Unknown(info)
	return &expr.Target{Name: "NFQUEUE", Rev: 3, Info: &unknown}
}
