// Package provisioner is the local seed's storage: it provisions a local PersistentVolume for every
// pending claim of its StorageClass once the scheduler has picked a node (WaitForFirstConsumer), and
// deletes it when the volume is released and deleted. The PV is pinned to the node by node affinity, so a
// restarted pod lands on the node that holds its data. Each volume is a tmpfs of the claim's requested
// size mounted on its own directory: like a CSI driver's volume it enforces its capacity, so a member's
// disk can fill up (capacity.go), and grows online when its claim asks for more (expand.go).
package provisioner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// Names of the storage the local seed serves.
const (
	// Name is the provisioner name in the StorageClass and the PVs' provisioned-by annotation.
	Name = "localseed.gardener-etcd.io/local-path"
	// StorageClass is the default class created by the seed.
	StorageClass = "local-path"

	annSelectedNode  = "volume.kubernetes.io/selected-node"
	annProvisioner   = "volume.kubernetes.io/storage-provisioner"
	annProvisionedBy = "pv.kubernetes.io/provisioned-by"
)

// Provisioner provisions and deletes the seed's volumes under Dir.
type Provisioner struct {
	Client kubernetes.Interface
	// Dir holds one directory per PV.
	Dir string
	// Nodes are the node names this provisioner serves.
	Nodes map[string]bool
	Log   logr.Logger
}

// EnsureStorageClass creates the default StorageClass (WaitForFirstConsumer: the volume is made on the
// node the scheduler picked, which matters because a directory exists on one node only). It allows volume
// expansion: a larger request on a bound claim grows its volume online (expand.go).
func (p *Provisioner) EnsureStorageClass(ctx context.Context) error {
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: StorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:          Name,
		ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		AllowVolumeExpansion: ptr.To(true),
	}
	_, err := p.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating storage class: %w", err)
	}
	return nil
}

// Register adds the claim and volume handlers to factory.
func (p *Provisioner) Register(ctx context.Context, factory informers.SharedInformerFactory) {
	_, _ = factory.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { p.claim(ctx, obj.(*corev1.PersistentVolumeClaim)) },
		UpdateFunc: func(_, obj any) {
			p.claim(ctx, obj.(*corev1.PersistentVolumeClaim))
			p.expand(ctx, obj.(*corev1.PersistentVolumeClaim))
		},
	})
	_, _ = factory.Core().V1().PersistentVolumes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.volume(ctx, obj.(*corev1.PersistentVolume)) },
		UpdateFunc: func(_, obj any) { p.volume(ctx, obj.(*corev1.PersistentVolume)) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pv, ok := obj.(*corev1.PersistentVolume); ok {
				p.removeDir(pv)
			}
		},
	})
}

func (p *Provisioner) claim(ctx context.Context, pvc *corev1.PersistentVolumeClaim) {
	node := pvc.Annotations[annSelectedNode]
	if pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.VolumeName != "" || pvc.Annotations[annProvisioner] != Name || !p.Nodes[node] {
		return
	}
	name := "pvc-" + string(pvc.UID)
	dir := filepath.Join(p.Dir, name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		p.Log.Error(err, "Creating volume directory failed", "pvc", pvc.Namespace+"/"+pvc.Name)
		return
	}
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if err := mountCapacity(dir, size); err != nil {
		p.Log.Error(err, "Mounting volume failed", "pvc", pvc.Namespace+"/"+pvc.Name)
		return
	}
	_ = os.Chmod(dir, 0o777) // any runAsUser may write, like local-path provisioners do
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: Name}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              ptr.Deref(pvc.Spec.StorageClassName, ""),
			VolumeMode:                    pvc.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname,
					Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}},
		},
	}
	_, err := p.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	switch {
	case err == nil:
		p.Log.Info("Volume provisioned", "pvc", pvc.Namespace+"/"+pvc.Name, "pv", name, "node", node)
	case !apierrors.IsAlreadyExists(err):
		p.Log.Error(err, "Creating volume failed", "pvc", pvc.Namespace+"/"+pvc.Name)
	}
}

// volume deletes a released volume of ours (reclaim policy Delete); the directory goes with the object.
func (p *Provisioner) volume(ctx context.Context, pv *corev1.PersistentVolume) {
	if pv.Annotations[annProvisionedBy] != Name || pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return
	}
	err := p.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		p.Log.Error(err, "Deleting released volume failed", "pv", pv.Name)
	}
}

func (p *Provisioner) removeDir(pv *corev1.PersistentVolume) {
	if pv.Annotations[annProvisionedBy] != Name || pv.Spec.Local == nil {
		return
	}
	dir := filepath.Clean(pv.Spec.Local.Path)
	if !strings.HasPrefix(dir, filepath.Clean(p.Dir)+string(filepath.Separator)) {
		return
	}
	if err := unmountCapacity(dir); err != nil {
		p.Log.Error(err, "Unmounting volume failed", "pv", pv.Name)
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		p.Log.Error(err, "Removing volume directory failed", "pv", pv.Name)
		return
	}
	p.Log.Info("Volume deleted", "pv", pv.Name)
}
