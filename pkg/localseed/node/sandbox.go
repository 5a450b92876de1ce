package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/hostsfile"
)

// prepareSandbox creates what all containers of the pod share: the directory, the network namespace
// with the pod IP, the hosts file and the volumes. It is idempotent, so a failed attempt (a PVC not bound
// yet, a missing secret) is simply retried.
func (w *podWorker) prepareSandbox(ctx context.Context) error {
	pod := w.current()
	if err := os.MkdirAll(filepath.Join(w.dir, "volumes"), 0o755); err != nil {
		return fmt.Errorf("creating pod directory: %w", err)
	}
	w.mu.Lock()
	netPod := w.net
	w.mu.Unlock()
	if netPod == nil {
		id := fmt.Sprintf("%s-%s-%s", pod.Namespace, pod.Name, string(pod.UID)[:5])
		created, err := w.n.cfg.Network.AddPod(ctx, id)
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.net = created
		w.mu.Unlock()
		netPod = created
		w.markDirty()
	}
	hostname := pod.Spec.Hostname
	if hostname == "" {
		hostname = pod.Name
	}
	if err := w.n.cfg.Hosts.Register(pod.UID, hostsfile.Pod{
		Namespace: pod.Namespace, Name: pod.Name, Hostname: hostname, Subdomain: pod.Spec.Subdomain,
		IP: netPod.IP.String(), HostAliases: pod.Spec.HostAliases, Path: w.hostsPath(),
	}); err != nil {
		return fmt.Errorf("writing hosts file: %w", err)
	}
	_, err := w.prepareVolumes(ctx)
	return err
}

func (w *podWorker) hostsPath() string { return filepath.Join(w.dir, "hosts") }

func (w *podWorker) volumeDir(name string) string { return filepath.Join(w.dir, "volumes", name) }

// podIP is the pod's address, empty before the network exists.
func (w *podWorker) podIP() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.net == nil {
		return ""
	}
	return w.net.IP.String()
}
