package provisioner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/api/resource"
)

// mountCapacity mounts a tmpfs of size bytes on dir, unless dir is a mount point already (the claim
// handler runs again for every update of a claim until its volume is bound). A claim without a size
// request gets a plain directory. tmpfs and not a loop-mounted file system: nothing to allocate up front,
// no loop device to leak when a seed crashes, and the size can be changed in place (Squeeze).
func mountCapacity(dir string, size resource.Quantity) error {
	if size.IsZero() {
		return nil
	}
	mounted, err := isMountPoint(dir)
	if err != nil || mounted {
		return err
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=0777", size.Value())); err != nil {
		return fmt.Errorf("mounting a tmpfs of %s on %s: %w", size.String(), dir, err)
	}
	return nil
}

// unmountCapacity unmounts the volume's file systems (if any) once its PV is deleted; lazily, since the
// kubelet may still be tearing down a bind mount of it. Every layer goes: a second file system stacked on
// the volume (seen after a killed seed) would otherwise keep the state directory from being removed.
func unmountCapacity(dir string) error {
	for range maxStackedMounts {
		mounted, err := isMountPoint(dir)
		if err != nil || !mounted {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			return fmt.Errorf("unmounting %s: %w", dir, err)
		}
	}
	return fmt.Errorf("%s is still a mount point after %d unmounts", dir, maxStackedMounts)
}

// maxStackedMounts bounds the layers unmountCapacity takes off one volume.
const maxStackedMounts = 16

// isMountPoint reports whether dir is on another device than its parent.
func isMountPoint(dir string) (bool, error) {
	var self, parent unix.Stat_t
	if err := unix.Stat(dir, &self); err != nil {
		return false, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	if err := unix.Stat(filepath.Dir(dir), &parent); err != nil {
		return false, &os.PathError{Op: "stat", Path: filepath.Dir(dir), Err: err}
	}
	return self.Dev != parent.Dev, nil
}

// Squeeze shrinks the volume mounted at dir (a PV's local path) so that only free bytes are left: the
// disk of whoever writes there fills up after free more bytes, as a full disk would, without writing
// filler data. The returned function gives the volume its size back. The volume's contents stay as
// they are throughout.
func Squeeze(dir string, free int64) (restore func() error, err error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", dir, err)
	}
	if mounted, err := isMountPoint(dir); err != nil || !mounted || fs.Type != unix.TMPFS_MAGIC {
		return nil, fmt.Errorf("%s is not a capacity-enforcing volume of the local seed (mounted %t, %v)", dir, mounted, err)
	}
	size := int64(fs.Blocks) * int64(fs.Bsize)
	// A writer may grow the volume between statfs and the remount, which then refuses a size below what
	// is in use: measure again and retry.
	for attempt := 0; ; attempt++ {
		used := (int64(fs.Blocks) - int64(fs.Bfree)) * int64(fs.Bsize)
		err := remountSize(dir, used+free)
		if err == nil {
			return func() error { return remountSize(dir, size) }, nil
		}
		if attempt == 4 {
			return nil, err
		}
		if err := unix.Statfs(dir, &fs); err != nil {
			return nil, fmt.Errorf("statfs %s: %w", dir, err)
		}
	}
}

// UnmountAll unmounts the volumes below dir (the provisioner's Dir), for a seed that is torn down.
func UnmountAll(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, unmountCapacity(filepath.Join(dir, e.Name())))
		}
	}
	return errors.Join(errs...)
}

func remountSize(dir string, size int64) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d", size)); err != nil {
		return fmt.Errorf("resizing the volume at %s to %d bytes: %w", dir, size, err)
	}
	return nil
}
