package provisioner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// expand grows the volume of a bound claim of ours to the size the claim now requests, online, as a CSI
// driver's resizer and node expansion would together: the tmpfs is remounted with the new size (a
// running pod sees the new capacity at once, through its bind mount), then the PV's capacity and the
// claim's status.capacity say so. Kubernetes admits a larger request only when the StorageClass allows
// volume expansion, and never a smaller one, so expand only ever grows a volume.
func (p *Provisioner) expand(ctx context.Context, pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName == "" || !p.Nodes[pvc.Annotations[annSelectedNode]] {
		return
	}
	want := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	have := pvc.Status.Capacity[corev1.ResourceStorage]
	if want.Cmp(have) <= 0 {
		return
	}
	logger := p.Log.WithValues("pvc", pvc.Namespace+"/"+pvc.Name, "pv", pvc.Spec.VolumeName, "from", have.String(), "to", want.String())
	if err := p.resize(ctx, pvc); err != nil {
		logger.Error(err, "Expanding volume failed")
		return
	}
	logger.Info("Volume expanded")
}

func (p *Provisioner) resize(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	want := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	pv, err := p.Client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if pv.Annotations[annProvisionedBy] != Name || pv.Spec.Local == nil {
		return nil // not ours
	}
	dir := filepath.Clean(pv.Spec.Local.Path)
	if !strings.HasPrefix(dir, filepath.Clean(p.Dir)+string(filepath.Separator)) {
		return fmt.Errorf("volume path %s is outside %s", dir, p.Dir)
	}
	if err := remountSize(dir, want.Value()); err != nil {
		return err
	}
	if current := pv.Spec.Capacity[corev1.ResourceStorage]; current.Cmp(want) < 0 {
		pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: want}
		if _, err := p.Client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("recording the new capacity on the PV: %w", err)
		}
	}
	claim := pvc.DeepCopy()
	claim.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: want}
	if _, err := p.Client.CoreV1().PersistentVolumeClaims(pvc.Namespace).UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("recording the new capacity on the claim: %w", err)
	}
	return nil
}
