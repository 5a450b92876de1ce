package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/provisioner"
)

// diskFull fills the data volume of a random member for d: the local seed's volumes enforce their
// size, and the volume is shrunk to what it holds (provisioner.Squeeze), so the next block etcd or the
// sidecar needs — a WAL segment, a page of the bbolt file, a snapshot's temporary file — fails with
// ENOSPC. The other two members keep the quorum. The volume gets its size back after d; what is on it
// is never touched.
func diskFull(d time.Duration) func(ctx context.Context, r *Round) (string, error) {
	return func(ctx context.Context, r *Round) (string, error) {
		pod, err := randomMember(ctx, r)
		if err != nil {
			return "", err
		}
		dir, err := r.Suite.volumePath(ctx, pod)
		if err != nil {
			return pod.Name, err
		}
		restarts := restartCount(pod, etcdpod.ContainerEtcd)
		restore, err := provisioner.Squeeze(dir, 0)
		if err != nil {
			return pod.Name, err
		}
		fullErr := expectFull(dir)
		waitErr := pause(ctx, d)
		restoreErr := restore()
		if p, err := r.Suite.pod(context.WithoutCancel(ctx), pod.Namespace, pod.Name); err == nil && p.UID == pod.UID {
			r.Note("etcd of %s restarted %d times with its disk full", pod.Name, restartCount(p, etcdpod.ContainerEtcd)-restarts)
		}
		return pod.Name, errors.Join(fullErr, waitErr, restoreErr)
	}
}

// expectFull fails unless a new block on the volume is refused: the fault must bite.
func expectFull(dir string) error {
	probe := filepath.Join(dir, ".chaos-disk-full-probe")
	defer os.Remove(probe)
	err := os.WriteFile(probe, make([]byte, 64<<10), 0o600)
	if !errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("volume %s is not full: writing 64 KiB gave %v", dir, err)
	}
	return nil
}

// volumePath is the host directory of the member's data volume: the local path of the PV bound to the
// pod's claim.
func (s *Suite) volumePath(ctx context.Context, pod *corev1.Pod) (string, error) {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: v.PersistentVolumeClaim.ClaimName}, pvc); err != nil {
			return "", err
		}
		pv := &corev1.PersistentVolume{}
		if err := s.Env.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
			return "", err
		}
		if pv.Spec.Local == nil {
			return "", fmt.Errorf("volume %s of %s is not a local volume", pv.Name, pod.Name)
		}
		return pv.Spec.Local.Path, nil
	}
	return "", fmt.Errorf("pod %s mounts no persistent volume", pod.Name)
}
