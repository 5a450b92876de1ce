package containerinit

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// rootBuilder assembles the container root under dir. Every directory of the tree is either backed by a
// host directory (bind-mounted, so its content is the host's) or synthetic (on a tmpfs of ours). A mount
// target below a host-backed directory that lacks it is made by "shadowing" that directory: a tmpfs is
// mounted over it and every entry of the backing directory is bind-mounted back, so the host is never
// written to.
type rootBuilder struct {
	dir string
	// backing maps a path inside the root (e.g. "/var") to the host path whose content it shows; paths
	// absent from the map are synthetic or below a backed path (see backingOf).
	backing   map[string]string
	synthetic map[string]bool
}

// entrypointDir holds the container's binary inside the root, bind-mounted from the host: the host path
// may lie below directories the container's user cannot traverse (e.g. a root-only temp dir).
const entrypointDir = "/.localseed"

// assembleRoot builds the root and returns the path of the executable inside it.
func assembleRoot(spec Spec) (string, error) {
	b := &rootBuilder{dir: spec.RootDir, backing: map[string]string{}, synthetic: map[string]bool{"/": true}}
	if err := unix.Mount("tmpfs", b.dir, "tmpfs", 0, "mode=0755"); err != nil {
		return "", fmt.Errorf("mounting the root tmpfs: %w", err)
	}
	if err := b.populate("/", "/"); err != nil {
		return "", err
	}
	mounts := append([]Mount(nil), spec.Mounts...)
	sort.SliceStable(mounts, func(i, j int) bool { return depth(mounts[i].Target) < depth(mounts[j].Target) })
	for _, m := range mounts {
		if err := b.bind(m); err != nil {
			return "", err
		}
	}
	for source, target := range map[string]string{spec.HostsFile: "/etc/hosts", spec.ResolvConf: "/etc/resolv.conf"} {
		if source == "" {
			continue
		}
		if err := b.bind(Mount{Source: source, Target: target, ReadOnly: true}); err != nil {
			return "", err
		}
	}
	if !filepath.IsAbs(spec.Path) {
		return spec.Path, nil
	}
	entrypoint := filepath.Join(entrypointDir, filepath.Base(spec.Path))
	if err := b.bind(Mount{Source: spec.Path, Target: entrypoint, ReadOnly: true}); err != nil {
		return "", err
	}
	return entrypoint, nil
}

// bind mounts m.Source at m.Target inside the root, creating the target as needed.
func (b *rootBuilder) bind(m Mount) error {
	target := filepath.Clean("/" + m.Target)
	info, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("volume source for %s: %w", target, err)
	}
	target, err = b.ensure(target, info.IsDir())
	if err != nil {
		return fmt.Errorf("creating mount point %s: %w", m.Target, err)
	}
	inRoot := filepath.Join(b.dir, target)
	if err := unix.Mount(m.Source, inRoot, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mounting %s at %s: %w", m.Source, target, err)
	}
	if m.ReadOnly {
		if err := unix.Mount("", inRoot, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", target, err)
		}
	}
	b.backing[target] = m.Source
	delete(b.synthetic, target)
	return nil
}

// maxSymlinks bounds symlink resolution in mount paths, like the kernel's limit.
const maxSymlinks = 40

// ensure makes target (a directory, or a file when !dir) exist inside the root and returns it with
// symlinks resolved inside the root (e.g. /var/run/secrets → /run/secrets).
func (b *rootBuilder) ensure(target string, dir bool) (string, error) {
	parts := strings.Split(strings.TrimPrefix(target, "/"), "/")
	cur := "/"
	for i, links := 0, 0; i < len(parts); i++ {
		next := filepath.Join(cur, parts[i])
		last := i == len(parts)-1
		info, err := os.Lstat(filepath.Join(b.dir, next))
		switch {
		case err == nil && info.Mode()&os.ModeSymlink != 0:
			if links++; links > maxSymlinks {
				return "", fmt.Errorf("too many symlinks in %s", target)
			}
			link, err := os.Readlink(filepath.Join(b.dir, next))
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(cur, link)
			}
			rest := append(strings.Split(strings.TrimPrefix(filepath.Clean(link), "/"), "/"), parts[i+1:]...)
			parts, cur, i = rest, "/", -1
			continue
		case err == nil:
			cur = next
			continue
		case !os.IsNotExist(err):
			return "", err
		}
		if !b.synthetic[cur] {
			if err := b.shadow(cur); err != nil {
				return "", err
			}
		}
		inRoot := filepath.Join(b.dir, next)
		if last && !dir {
			f, err := os.OpenFile(inRoot, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return "", err
			}
			_ = f.Close()
		} else if err := os.Mkdir(inRoot, 0o755); err != nil {
			return "", err
		}
		b.synthetic[next] = true
		cur = next
	}
	return cur, nil
}

// shadow replaces the host-backed directory p by a tmpfs that shows the same entries through binds.
func (b *rootBuilder) shadow(p string) error {
	source := b.backingOf(p)
	if err := unix.Mount("tmpfs", filepath.Join(b.dir, p), "tmpfs", 0, "mode=0755"); err != nil {
		return fmt.Errorf("shadowing %s: %w", p, err)
	}
	b.synthetic[p] = true
	return b.populate(p, source)
}

// populate makes every entry of the host directory source visible at p inside the root: symlinks are
// copied, directories and files bind-mounted. Children of a populated directory are host-backed.
func (b *rootBuilder) populate(p, source string) error {
	entries, err := os.ReadDir(source)
	if err != nil {
		return fmt.Errorf("listing %s: %w", source, err)
	}
	for _, e := range entries {
		from := filepath.Join(source, e.Name())
		to := filepath.Join(b.dir, p, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			link, err := os.Readlink(from)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, to); err != nil {
				return err
			}
			continue
		case e.IsDir():
			if err := os.Mkdir(to, 0o755); err != nil {
				return err
			}
		default:
			f, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			_ = f.Close()
		}
		if err := unix.Mount(from, to, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mounting %s: %w", from, err)
		}
		b.backing[filepath.Join(p, e.Name())] = from
	}
	return nil
}

// backingOf is the host path shown at p: the nearest recorded ancestor's source plus the rest of p.
func (b *rootBuilder) backingOf(p string) string {
	for cur := p; ; cur = filepath.Dir(cur) {
		if src, ok := b.backing[cur]; ok {
			rel, _ := filepath.Rel(cur, p)
			return filepath.Join(src, rel)
		}
		if cur == "/" {
			return p
		}
	}
}

func depth(p string) int { return strings.Count(filepath.Clean("/"+p), "/") }
