package kubeletnode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// kernelTunables are the host-wide kernel settings (none belongs to a network namespace) that every
// kubelet sets when it starts without protectKernelDefaults: overcommit, panic on OOM, reboot 10 s after a
// panic, panic on oops, and the root user's key quotas. protectKernelDefaults would make the kubelet refuse
// to start instead, so the host's values are recorded before the first kubelet and put back when it stops.
var kernelTunables = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// KernelTunables is the record of the host's own kernel settings that the seeds of this host share. The
// settings are host-wide, so the record is too: with two seeds running at once (make test runs the seed
// packages in parallel) a record per seed would save what the other seed's kubelets had set, and whichever
// seed stopped last would put that back. So the first seed records the host's values, every seed registers
// itself, and the last one to leave restores them.
type KernelTunables struct {
	// Dir holds the record (host.json), one file per registered seed (users/) and the lock.
	Dir string
	// ProcSys is /proc/sys.
	ProcSys string
}

// HostKernelTunables is the record of this host.
var HostKernelTunables = KernelTunables{Dir: "/run/gardener-etcd-localseed/kernel-tunables", ProcSys: "/proc/sys"}

// Acquire registers the seed whose state directory is stateDir; when no other seed is registered, it
// records the host's settings first. Registrations of seeds whose state directory is gone (a seed that
// crashed and was cleaned up by hand) do not count and are dropped.
func (k KernelTunables) Acquire(stateDir string) error {
	return k.locked(func() error {
		users, err := k.liveUsers()
		if err != nil {
			return err
		}
		if len(users) == 0 {
			if err := k.record(); err != nil {
				return err
			}
		}
		return os.WriteFile(k.userFile(stateDir), []byte(stateDir), 0o600)
	})
}

// Release unregisters the seed of stateDir; when it was the last, it writes the recorded settings back and
// removes the record. A seed that was never registered releases nothing.
func (k KernelTunables) Release(stateDir string) error {
	return k.locked(func() error {
		if err := os.Remove(k.userFile(stateDir)); errors.Is(err, os.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		users, err := k.liveUsers()
		if err != nil || len(users) > 0 {
			return err
		}
		return k.restore()
	})
}

// Users lists the state directories of the seeds registered now.
func (k KernelTunables) Users() ([]string, error) {
	var users []string
	err := k.locked(func() error {
		var err error
		users, err = k.liveUsers()
		return err
	})
	return users, err
}

// HostValue is the host's own value of setting (one of the settings the kubelets change, named below
// ProcSys, such as "kernel/panic"): the recorded one while a record exists (seeds run, or the last one
// could not restore it: the next seed to stop puts it back), else the live value.
func (k KernelTunables) HostValue(setting string) (string, error) {
	var value string
	err := k.locked(func() error {
		values, err := k.hostValues(setting)
		if err != nil || values != nil {
			value = values[setting]
			return err
		}
		data, err := os.ReadFile(filepath.Join(k.ProcSys, setting))
		value = strings.TrimSpace(string(data))
		return err
	})
	return value, err
}

// SetHostValue changes the host's own value of setting: the recorded one while a record exists (the
// running seeds' kubelets keep theirs until the last seed stops and puts it back), else the live value.
func (k KernelTunables) SetHostValue(setting, value string) error {
	return k.locked(func() error {
		values, err := k.hostValues(setting)
		if err != nil {
			return err
		}
		if values == nil {
			return os.WriteFile(filepath.Join(k.ProcSys, setting), []byte(value), 0o644)
		}
		values[setting] = value
		return k.writeRecord(values)
	})
}

// hostValues returns the record, under the lock; nil when there is none, and then the live values are the
// host's own. A registered seed without a record is an error (its settings are lost), and so is a setting
// the kubelets do not change.
func (k KernelTunables) hostValues(setting string) (map[string]string, error) {
	if !slices.Contains(kernelTunables, setting) {
		return nil, fmt.Errorf("kernel setting %s is not one the kubelets change (%v)", setting, kernelTunables)
	}
	values, err := k.readRecord()
	if err != nil || values != nil {
		return values, err
	}
	users, err := k.liveUsers()
	if err == nil && len(users) > 0 {
		err = fmt.Errorf("seeds %v run but %s holds no record of the host's kernel settings", users, k.Dir)
	}
	return nil, err
}

// locked runs fn holding the record's lock, which serializes the seeds of the host (flock: released when
// the process dies, so a crashed seed leaves no lock behind).
func (k KernelTunables) locked(fn func() error) error {
	if err := os.MkdirAll(filepath.Join(k.Dir, "users"), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(k.Dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer func() { _ = unix.Flock(int(lock.Fd()), unix.LOCK_UN) }()
	return fn()
}

// userFile is the registration of a seed, named by a hash of its state directory.
func (k KernelTunables) userFile(stateDir string) string {
	sum := sha256.Sum256([]byte(stateDir))
	return filepath.Join(k.Dir, "users", hex.EncodeToString(sum[:8]))
}

// liveUsers lists the registered seeds whose state directory exists, dropping the others.
func (k KernelTunables) liveUsers() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(k.Dir, "users"))
	if err != nil {
		return nil, err
	}
	var users []string
	for _, e := range entries {
		file := filepath.Join(k.Dir, "users", e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(string(data)); errors.Is(err, os.ErrNotExist) {
			_ = os.Remove(file)
			continue
		}
		users = append(users, string(data))
	}
	return users, nil
}

// record saves the host's current settings, unless a record exists already (a previous last seed that
// could not restore them: the record still holds the host's own values).
func (k KernelTunables) record() error {
	if _, err := os.Stat(k.recordFile()); err == nil {
		return nil
	}
	values := map[string]string{}
	for _, name := range kernelTunables {
		data, err := os.ReadFile(filepath.Join(k.ProcSys, name))
		if err != nil {
			return fmt.Errorf("reading kernel setting %s: %w", name, err)
		}
		values[name] = strings.TrimSpace(string(data))
	}
	return k.writeRecord(values)
}

// restore writes the recorded settings back and removes the record; without a record it does nothing.
func (k KernelTunables) restore() error {
	values, err := k.readRecord()
	if err != nil || values == nil {
		return err
	}
	var errs []error
	for _, name := range kernelTunables {
		if value, ok := values[name]; ok {
			if err := os.WriteFile(filepath.Join(k.ProcSys, name), []byte(value), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("restoring kernel setting %s=%s: %w", name, value, err))
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return os.Remove(k.recordFile())
}

// recordFile holds the host's own values while seeds run.
func (k KernelTunables) recordFile() string {
	return filepath.Join(k.Dir, "host.json")
}

// readRecord reads the record; without one it returns nil values and no error.
func (k KernelTunables) readRecord() (map[string]string, error) {
	data, err := os.ReadFile(k.recordFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	if err := json.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("kernel settings record %s: %w", k.recordFile(), err)
	}
	return values, nil
}

// writeRecord replaces the record with values, through a new file renamed over it, so that a process
// killed meanwhile leaves the old record or the new one, never a part of one.
func (k KernelTunables) writeRecord(values map[string]string) error {
	data, err := json.Marshal(values)
	if err != nil {
		return err
	}
	tmp := k.recordFile() + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, k.recordFile())
}
