package provisioner

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A volume with two file systems stacked on it (found after a killed e2e run: `local down` detached one,
// the other kept the state directory from being removed) is unmounted completely.
func TestUnmountAllRemovesStackedMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	volume := filepath.Join(dir, "pvc-stacked")
	if err := os.Mkdir(volume, 0o700); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := unix.Mount("tmpfs", volume, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1048576"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for range 3 {
			_ = unix.Unmount(volume, unix.MNT_DETACH)
		}
	})
	if err := UnmountAll(dir); err != nil {
		t.Fatal(err)
	}
	if mounted, err := isMountPoint(volume); err != nil || mounted {
		t.Fatalf("after UnmountAll %s is still a mount point (%v, %v)", volume, mounted, err)
	}
}
