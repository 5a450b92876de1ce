// Package kubeletnode runs one real Kubernetes node of the local seed on the host: a kubelet (built from
// k8s.io/kubernetes), its own containerd 2.x with runc, the CNI bridge/host-local/portmap plugins, and
// kube-proxy — all inside the node's own network namespace, with the node's own state, root and log
// directories and cgroup parent, so that several nodes share one host without seeing each other's pods.
//
// The processes switch only their network namespace (nsenter --net), not their mount namespace: the
// kubelet mounts volumes that containerd must see, and both must see the host's /sys/fs/cgroup.
//
// Facts of the sandbox this runs in: no CAP_SYS_RESOURCE, so containerd must not give the pause container
// a negative oom_score_adj (restrict_oom_score_adj); cgroup v1 (hybrid), so the kubelet needs
// failCgroupV1: false.
package kubeletnode
