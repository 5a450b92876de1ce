package provisioner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// A bound claim that asks for more grows its volume in place: what it holds stays, the new space can be
// written, and the PV and the claim's status report the new capacity. A claim that asks for what it has
// changes nothing.
func TestBoundClaimGrowsItsVolumeOnline(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	ctx := context.Background()
	client := fake.NewClientset()
	p := &Provisioner{Client: client, Dir: t.TempDir(), Nodes: map[string]bool{"node-a": true}, Log: logr.Discard()}
	t.Cleanup(func() { _ = UnmountAll(p.Dir) })
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", UID: "claim-1",
			Annotations: map[string]string{annSelectedNode: "node-a", annProvisioner: Name}},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(StorageClass),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Mi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	if _, err := client.CoreV1().PersistentVolumeClaims("ns").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.claim(ctx, pvc)
	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, "pvc-claim-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := pv.Spec.Local.Path
	kept := bytes.Repeat([]byte("k"), 3*mebibyte)
	writeFile(t, filepath.Join(dir, "kept"), kept, nil)
	writeFile(t, filepath.Join(dir, "more"), make([]byte, 2*mebibyte), syscall.ENOSPC)

	// Bound, as the PV controller leaves it; then the owner asks for 8Mi.
	pvc.Spec.VolumeName = pv.Name
	pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("4Mi")}}
	p.expand(ctx, pvc)
	if got := volumeSize(t, dir); got != 4*mebibyte {
		t.Fatalf("a claim asking for what it has changed the volume to %d bytes", got)
	}
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("8Mi")
	p.expand(ctx, pvc)

	if got := volumeSize(t, dir); got != 8*mebibyte {
		t.Fatalf("volume size %d after expansion, want %d", got, 8*mebibyte)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "kept")); err != nil || !bytes.Equal(got, kept) {
		t.Fatalf("the expanded volume lost what it held (%v)", err)
	}
	writeFile(t, filepath.Join(dir, "more"), make([]byte, 2*mebibyte), nil)
	pv, err = client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.Cmp(resource.MustParse("8Mi")) != 0 {
		t.Fatalf("PV capacity %s, want 8Mi", got.String())
	}
	claim, err := client.CoreV1().PersistentVolumeClaims("ns").Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := claim.Status.Capacity[corev1.ResourceStorage]; got.Cmp(resource.MustParse("8Mi")) != 0 {
		t.Fatalf("claim status capacity %s, want 8Mi", got.String())
	}
}

func volumeSize(t *testing.T, dir string) int64 {
	t.Helper()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	return int64(fs.Blocks) * int64(fs.Bsize)
}
