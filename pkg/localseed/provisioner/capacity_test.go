package provisioner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"golang.org/x/sys/unix"
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
	g := NewWithT(t)
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
	g.Expect(err).NotTo(HaveOccurred())
	dir := pv.Spec.Local.Path
	g.Expect(mountsAt(t, dir)).To(Equal(1))
	var fs unix.Statfs_t
	g.Expect(unix.Statfs(dir, &fs)).To(Succeed())
	g.Expect(int64(fs.Blocks) * int64(fs.Bsize)).To(Equal(int64(8 * mebibyte)))

	kept := bytes.Repeat([]byte("k"), mebibyte)
	g.Expect(os.WriteFile(filepath.Join(dir, "kept"), kept, 0o644)).To(Succeed())
	restore, err := Squeeze(dir, 256<<10)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(dir, "more"), make([]byte, mebibyte), 0o644)).To(MatchError(syscall.ENOSPC))
	g.Expect(os.ReadFile(filepath.Join(dir, "kept"))).To(Equal(kept))
	g.Expect(restore()).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "more"), make([]byte, mebibyte), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "too-much"), make([]byte, 8*mebibyte), 0o644)).To(MatchError(syscall.ENOSPC))

	p.removeDir(pv)
	g.Expect(mountsAt(t, dir)).To(Equal(0))
	g.Expect(dir).NotTo(BeADirectory())
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
