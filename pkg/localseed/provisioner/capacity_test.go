package provisioner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

const mebibyte = 1 << 20

// A provisioned volume enforces the claim's size, the claim handler running again does not stack a second
// mount, Squeeze fills the disk without touching what is on it and gives the size back, and deleting the
// PV unmounts and removes the volume.
func TestVolumesEnforceTheirCapacity(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	ctx := context.Background()
	p := &Provisioner{Client: fake.NewClientset(), Dir: t.TempDir(), Nodes: map[string]bool{"node-a": true}, Log: logr.Discard()}
	t.Cleanup(func() { _ = UnmountAll(p.Dir) })
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", UID: "claim-1",
			Annotations: map[string]string{annSelectedNode: "node-a", annProvisioner: Name}},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(StorageClass),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("8Mi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	p.claim(ctx, pvc)
	p.claim(ctx, pvc)
	pv, err := p.Client.CoreV1().PersistentVolumes().Get(ctx, "pvc-claim-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := pv.Spec.Local.Path
	if n := mountsAt(t, dir); n != 1 {
		t.Fatalf("%d mounts at %s after two claim rounds, want 1", n, dir)
	}
	if got := volumeSize(t, dir); got != 8*mebibyte {
		t.Fatalf("volume size %d, want %d", got, 8*mebibyte)
	}

	kept := bytes.Repeat([]byte("k"), mebibyte)
	writeFile(t, filepath.Join(dir, "kept"), kept, nil)
	restore, err := Squeeze(dir, 256<<10)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "more"), make([]byte, mebibyte), syscall.ENOSPC)
	if got, err := os.ReadFile(filepath.Join(dir, "kept")); err != nil || !bytes.Equal(got, kept) {
		t.Fatalf("the squeezed volume lost what it held (%v)", err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "more"), make([]byte, mebibyte), nil)
	writeFile(t, filepath.Join(dir, "too-much"), make([]byte, 8*mebibyte), syscall.ENOSPC)

	p.removeDir(pv)
	if n := mountsAt(t, dir); n != 0 {
		t.Fatalf("%d mounts left at %s after the PV was deleted", n, dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("volume directory still there: %v", err)
	}
}

// writeFile writes data to path and fails unless the error is want (nil: success).
func writeFile(t *testing.T, path string, data []byte, want error) {
	t.Helper()
	err := os.WriteFile(path, data, 0o644)
	if (want == nil && err != nil) || (want != nil && !errors.Is(err, want)) {
		t.Fatalf("writing %d bytes to %s: got %v, want %v", len(data), path, err, want)
	}
}

// mountsAt counts the mounts whose mount point is dir.
func mountsAt(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) > 4 && fields[4] == dir {
			n++
		}
	}
	return n
}
