package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/containerinit"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
)

// Waiting reasons of containers that could not be started, as the kubelet reports them.
const (
	reasonImageNotMapped = "ErrImagePull"
	reasonConfigError    = "CreateContainerConfigError"
	reasonStartError     = "RunContainerError"
)

// start launches the container once; on failure it returns the waiting reason and message.
func (r *containerRunner) start(ctx context.Context) (*proc.Process, string, string) {
	w := r.w
	pod := w.current()
	binary, ok := w.n.cfg.Images[r.c.Image]
	if !ok {
		return nil, reasonImageNotMapped, fmt.Sprintf("image %q is not mapped to a local binary (localseed Options.Images)", r.c.Image)
	}
	volumes, err := w.prepareVolumes(ctx)
	if err != nil {
		return nil, reasonConfigError, err.Error()
	}
	env, values, err := w.containerEnv(ctx, pod, r.c)
	if err != nil {
		return nil, reasonConfigError, err.Error()
	}
	mounts, err := mountsOf(r.c, volumes, values)
	if err != nil {
		return nil, reasonConfigError, err.Error()
	}
	dir := filepath.Join(w.dir, "containers", r.c.Name)
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, reasonStartError, err.Error()
	}
	path, argv := commandLine(r.c, binary, values)
	spec := containerinit.Spec{
		NetNSPath: w.net.NetNSPath, Hostname: hostnameOf(pod), HostsFile: w.hostsPath(),
		ResolvConf: w.resolvConfPath(), RootDir: root,
		Mounts: mounts, WorkingDir: r.c.WorkingDir, Path: path, Args: argv, Env: env,
	}
	spec.UID, spec.GID, spec.Groups = credentials(pod, r.c)
	specPath := filepath.Join(dir, "spec.json")
	if err := containerinit.WriteSpec(specPath, spec); err != nil {
		return nil, reasonStartError, err.Error()
	}
	self, initEnv, err := containerinit.Command(specPath)
	if err != nil {
		return nil, reasonStartError, err.Error()
	}
	logDir := filepath.Join(w.n.cfg.LogDir, pod.Namespace, pod.Name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, reasonStartError, err.Error()
	}
	p, err := proc.Start(proc.Spec{Path: self, Args: nil, Env: initEnv,
		LogPath: filepath.Join(logDir, r.c.Name+".log"), Cloneflags: containerinit.Cloneflags})
	if err != nil {
		return nil, reasonStartError, err.Error()
	}
	r.mu.Lock()
	r.env = env
	r.mu.Unlock()
	r.log.V(1).Info("Container started", "pid", p.Pid(), "binary", binary)
	return p, "", ""
}

// commandLine maps the image to its binary: with a command whose first word is the image's binary (or
// is not found on the host) the binary replaces it, other commands (e.g. /bin/sh) run as given.
func commandLine(c corev1.Container, binary string, values map[string]string) (string, []string) {
	var argv []string
	for _, a := range c.Command {
		argv = append(argv, expand(a, values))
	}
	for _, a := range c.Args {
		argv = append(argv, expand(a, values))
	}
	if len(c.Command) == 0 {
		return binary, append([]string{binary}, argv...)
	}
	first := argv[0]
	if filepath.Base(first) == filepath.Base(binary) {
		return binary, argv
	}
	if filepath.IsAbs(first) {
		if _, err := os.Stat(first); err != nil {
			return binary, argv
		}
	}
	return first, argv
}

// mountsOf resolves the container's volumeMounts (with subPath/subPathExpr) to host paths.
func mountsOf(c corev1.Container, volumes map[string]string, values map[string]string) ([]containerinit.Mount, error) {
	var mounts []containerinit.Mount
	for _, m := range c.VolumeMounts {
		source, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s refers to no volume", m.Name)
		}
		sub := m.SubPath
		if m.SubPathExpr != "" {
			sub = expand(m.SubPathExpr, values)
		}
		if sub != "" {
			source = filepath.Join(source, filepath.Clean("/"+sub))
			if _, err := os.Stat(source); os.IsNotExist(err) {
				if err := os.MkdirAll(source, 0o777); err != nil {
					return nil, err
				}
			}
		}
		mounts = append(mounts, containerinit.Mount{Source: source, Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	return mounts, nil
}

// credentials resolves runAsUser/runAsGroup (container over pod) and the groups (fsGroup, supplemental).
func credentials(pod *corev1.Pod, c corev1.Container) (uid, gid *int64, groups []int64) {
	if psc := pod.Spec.SecurityContext; psc != nil {
		uid, gid = psc.RunAsUser, psc.RunAsGroup
		if psc.FSGroup != nil {
			groups = append(groups, *psc.FSGroup)
		}
		groups = append(groups, psc.SupplementalGroups...)
	}
	if csc := c.SecurityContext; csc != nil {
		if csc.RunAsUser != nil {
			uid = csc.RunAsUser
		}
		if csc.RunAsGroup != nil {
			gid = csc.RunAsGroup
		}
	}
	return uid, gid, groups
}
