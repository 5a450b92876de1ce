package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/kubeletnode"
)

// criNamespace is the containerd namespace the kubelet's CRI plugin keeps its containers in.
const criNamespace = "k8s.io"

// commandTimeout bounds one ctr, nsenter or ip call: local calls that normally take milliseconds.
const commandTimeout = 30 * time.Second

// node runs containerd's own client (`ctr`, built by `make tools` from the pinned containerd module) against
// the containerd of one of the seed's nodes, and iproute2 in a pod's network namespace.
type node struct {
	ctr  string
	name string
}

// socket is the node's containerd socket (kubeletnode keeps it outside the state directory).
func (n node) socket() string {
	return filepath.Join(kubeletnode.Config{Name: n.name}.SocketDir(), "containerd.sock")
}

// run runs a command and returns its stdout, with stderr in the error.
func run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func (n node) ctrCmd(ctx context.Context, args ...string) (string, error) {
	return run(ctx, n.ctr, append([]string{"--address", n.socket(), "--namespace", criNamespace}, args...)...)
}

// killTask sends SIGKILL to the task (the container's processes) of containerID, as `kill -9` would; the
// kubelet sees the exit through containerd's events and restarts the container.
func (n node) killTask(ctx context.Context, containerID string) error {
	_, err := n.ctrCmd(ctx, "tasks", "kill", "--signal", "SIGKILL", containerID)
	return err
}

// pauseTask freezes the container's processes (cgroup freezer): alive, holding their sockets and files,
// doing nothing — a hung process. resumeTask thaws them.
func (n node) pauseTask(ctx context.Context, containerID string) error {
	_, err := n.ctrCmd(ctx, "tasks", "pause", containerID)
	return err
}

func (n node) resumeTask(ctx context.Context, containerID string) error {
	_, err := n.ctrCmd(ctx, "tasks", "resume", containerID)
	return err
}

// netNSPath is the network namespace of a container: the pod's, created by the CRI plugin and pinned
// under /var/run/netns, so it outlives restarts of the container.
func (n node) netNSPath(ctx context.Context, containerID string) (string, error) {
	out, err := n.ctrCmd(ctx, "containers", "info", "--spec", containerID)
	if err != nil {
		return "", err
	}
	var spec struct {
		Linux struct {
			Namespaces []struct {
				Type string `json:"type"`
				Path string `json:"path"`
			} `json:"namespaces"`
		} `json:"linux"`
	}
	if err := json.Unmarshal([]byte(out), &spec); err != nil {
		return "", fmt.Errorf("the spec of container %s: %w", containerID, err)
	}
	for _, ns := range spec.Linux.Namespaces {
		if ns.Type == "network" && ns.Path != "" {
			return ns.Path, nil
		}
	}
	return "", fmt.Errorf("container %s names no network namespace", containerID)
}

// inNetNS runs `ip args...` inside the network namespace at path.
func inNetNS(ctx context.Context, path string, args ...string) (string, error) {
	return run(ctx, "nsenter", append([]string{"--net=" + path, "ip"}, args...)...)
}

// containerID is the containerd ID of the named container of pod ("" when it has none yet).
func containerID(pod *corev1.Pod, container string) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container {
			_, id, _ := strings.Cut(cs.ContainerID, "://")
			return id
		}
	}
	return ""
}

// restartCount is the kubelet's restart count of the named container of pod.
func restartCount(pod *corev1.Pod, container string) int32 {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.RestartCount
		}
	}
	return 0
}
