// Package containerinit turns a process of the local seed into a pod's container: it joins the pod's
// network namespace, assembles a private root from bind mounts (host root plus the pod's volumes at their
// mountPath, the pod's hosts file and resolv.conf under /etc), drops privileges and execs the container's binary.
//
// It works by re-executing the seed binary itself (the Go "reexec" pattern): Command returns an
// invocation of os.Executable with the spec path in the environment, and this package's init function,
// linked into every binary that uses the local seed, notices it and never returns to main. Nothing is ever
// mounted in the host's mount namespace, so a container leaves no mount behind when it exits.
package containerinit

import (
	"encoding/json"
	"fmt"
	"os"
	"syscall"
)

// EnvSpec names the environment variable that carries the spec file's path to the re-executed child.
const EnvSpec = "GARDENER_ETCD_LOCALSEED_CONTAINER_SPEC"

// Cloneflags are the namespaces the child must be started in: a private mount namespace for the
// assembled root and a UTS namespace for the pod's hostname.
const Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS

// Mount is a bind mount of a host path (a volume's directory or file) into the container.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Spec is everything the child needs; it is written as JSON by the node agent.
type Spec struct {
	// NetNSPath is the pod's network namespace file (/run/netns/<name>).
	NetNSPath string `json:"netnsPath"`
	// Hostname is set in the container's UTS namespace.
	Hostname string `json:"hostname"`
	// HostsFile is bind-mounted over /etc/hosts; the node rewrites it in place when endpoints change.
	HostsFile string `json:"hostsFile"`
	// ResolvConf is bind-mounted over /etc/resolv.conf.
	ResolvConf string `json:"resolvConf,omitempty"`
	// RootDir is an empty directory where the container root is assembled (a tmpfs is mounted on it).
	RootDir string `json:"rootDir"`
	// Mounts are applied in order of target depth.
	Mounts []Mount `json:"mounts,omitempty"`
	// WorkingDir defaults to /.
	WorkingDir string `json:"workingDir,omitempty"`
	// UID, GID and Groups are the credentials to run as; nil keeps root.
	UID    *int64  `json:"uid,omitempty"`
	GID    *int64  `json:"gid,omitempty"`
	Groups []int64 `json:"groups,omitempty"`
	// Path is the executable (a host path, visible in the assembled root through the binds); Args is
	// the complete argv including argv[0].
	Path string   `json:"path"`
	Args []string `json:"args"`
	// Env is the container's complete environment.
	Env []string `json:"env"`
}

// WriteSpec stores spec at path for the child to read.
func WriteSpec(path string, spec Spec) error {
	data, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("encoding container spec: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing container spec: %w", err)
	}
	return nil
}

// Command returns the executable and environment that start a container from the spec at specPath;
// the caller starts it with Cloneflags.
func Command(specPath string) (path string, env []string, err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("locating the seed binary for re-execution: %w", err)
	}
	return self, []string{EnvSpec + "=" + specPath}, nil
}
