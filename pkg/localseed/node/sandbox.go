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
	}
	hostname := pod.Spec.Hostname
	if hostname == "" {
		hostname = pod.Name
	}
	if err := w.n.cfg.Hosts.Register(pod.UID, hostsfile.Pod{
		Namespace: pod.Namespace, Name: pod.Name, Hostname: hostname, Subdomain: pod.Spec.Subdomain,
		IP: netPod.IP.String(), Labels: pod.Labels, HostAliases: pod.Spec.HostAliases, Path: w.hostsPath(),
	}); err != nil {
		return fmt.Errorf("writing hosts file: %w", err)
	}
	if err := writeResolvConf(w.resolvConfPath()); err != nil {
		return err
	}
	// The pod IP is reported only now that every hosts file that should list the pod does.
	w.markDirty()
	_, err := w.prepareVolumes(ctx)
	return err
}

func (w *podWorker) hostsPath() string { return filepath.Join(w.dir, "hosts") }

func (w *podWorker) resolvConfPath() string { return filepath.Join(w.dir, "resolv.conf") }

// resolvConf is every pod's /etc/resolv.conf. The seed runs no DNS server: names resolve from the hosts
// file only. Without it the host's resolv.conf would apply, whose servers are unreachable from a pod
// network, so a name missing from the hosts file would hang until the resolver's 5 s timeouts (times
// attempts, times servers) ran out. 127.0.0.1 is the pod's own loopback, where nothing listens on
// port 53: the query is refused at once and the lookup fails fast ("connection refused"); timeout:1
// attempts:1 bound it should a pod ever run something there.
const resolvConf = `# Managed by the gardener-etcd local seed: names resolve from /etc/hosts only; no DNS server runs.
nameserver 127.0.0.1
options timeout:1 attempts:1
`

func writeResolvConf(path string) error {
	if err := os.WriteFile(path, []byte(resolvConf), 0o644); err != nil {
		return fmt.Errorf("writing resolv.conf: %w", err)
	}
	return nil
}

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
