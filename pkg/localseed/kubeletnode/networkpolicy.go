package kubeletnode

// NetworkPolicyAgent is the binary of `make tools` (hack/tools/kube-network-policies) that enforces
// NetworkPolicies on a node: upstream's kube-network-policies controller, run with a kubeconfig. In the
// node's network namespace it adds one nftables table whose postrouting chain sends the first packet of
// every new connection from or to the node's pod range to an NFQUEUE; the agent accepts or drops it by the
// policies. Packets of established connections and of root's own sockets in the node's namespace (the
// kubelet's probes) are let through by the table itself. Each node has its own namespace, so the agents
// share neither rules nor queues; stopping the agent deletes its table, and removing the namespace would too.
const NetworkPolicyAgent = "kube-network-policies"

// networkPolicyAgentArgs: fail closed (a queued packet nobody reads is dropped, as upstream's default),
// the node's name and pod range, and no metrics endpoint.
func (c Config) networkPolicyAgentArgs() []string {
	return []string{
		"--kubeconfig=" + c.NetworkPolicyKubeconfig,
		"--hostname-override=" + c.Name,
		"--pod-cidr=" + c.PodCIDR.String(),
		"--v=1",
	}
}
