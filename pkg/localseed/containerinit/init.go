package containerinit

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// exitSetupFailed is the exit code of a container whose setup failed before its binary ran; the reason
// is in the container's log.
const exitSetupFailed = 127

func init() {
	specPath := os.Getenv(EnvSpec)
	if specPath == "" {
		return
	}
	// Namespace switches and exec must happen on one OS thread.
	runtime.LockOSThread()
	err := run(specPath)
	fmt.Fprintf(os.Stderr, "localseed container init: %v\n", err)
	os.Exit(exitSetupFailed)
}

// run only returns on error: on success the process image is replaced by the container's binary.
func run(specPath string) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return fmt.Errorf("reading spec: %w", err)
	}
	var spec Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("decoding spec: %w", err)
	}
	// Slave, not private: unmounts on the host (e.g. `ip netns del` of another pod) still propagate in,
	// so this namespace never pins another pod's network namespace; nothing propagates out.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("making / a slave mount: %w", err)
	}
	path, err := assembleRoot(spec)
	if err != nil {
		return err
	}
	if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
		return fmt.Errorf("setting hostname: %w", err)
	}
	if err := joinNetNS(spec.NetNSPath); err != nil {
		return err
	}
	if err := unix.Chroot(spec.RootDir); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	wd := spec.WorkingDir
	if wd == "" {
		wd = "/"
	}
	if err := os.Chdir(wd); err != nil {
		return fmt.Errorf("changing to working dir %s: %w", wd, err)
	}
	if err := dropPrivileges(spec); err != nil {
		return err
	}
	if !filepath.IsAbs(path) {
		os.Setenv("PATH", envValue(spec.Env, "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"))
		if path, err = exec.LookPath(path); err != nil {
			return fmt.Errorf("looking up %s: %w", spec.Path, err)
		}
	}
	return fmt.Errorf("exec %s: %w", path, syscall.Exec(path, spec.Args, spec.Env))
}

func joinNetNS(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening network namespace %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("joining network namespace %s: %w", path, err)
	}
	return nil
}

func dropPrivileges(spec Spec) error {
	if spec.GID != nil || spec.UID != nil {
		groups := make([]int, 0, len(spec.Groups))
		for _, g := range spec.Groups {
			groups = append(groups, int(g))
		}
		if err := syscall.Setgroups(groups); err != nil {
			return fmt.Errorf("setting groups: %w", err)
		}
	}
	if spec.GID != nil {
		if err := syscall.Setgid(int(*spec.GID)); err != nil {
			return fmt.Errorf("setting gid: %w", err)
		}
	}
	if spec.UID != nil {
		if err := syscall.Setuid(int(*spec.UID)); err != nil {
			return fmt.Errorf("setting uid: %w", err)
		}
	}
	// A credential change clears the parent-death signal; the container must still die with the seed.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("setting the parent-death signal: %w", err)
	}
	return nil
}

func envValue(env []string, key, fallback string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if len(env[i]) > len(key) && env[i][:len(key)+1] == key+"=" {
			return env[i][len(key)+1:]
		}
	}
	return fallback
}
