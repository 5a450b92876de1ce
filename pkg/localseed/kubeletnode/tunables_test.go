package kubeletnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeHost is a /proc/sys of files holding the kernel settings, and a record directory.
func fakeHost(t *testing.T, value string) (KernelTunables, func() string, func(string)) {
	t.Helper()
	k := KernelTunables{Dir: filepath.Join(t.TempDir(), "record"), ProcSys: t.TempDir()}
	set := func(v string) {
		for _, name := range kernelTunables {
			path := filepath.Join(k.ProcSys, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	get := func() string {
		data, err := os.ReadFile(filepath.Join(k.ProcSys, "kernel/panic"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(data))
	}
	set(value)
	return k, get, set
}

// Two seeds overlap: the second records nothing (the kubelets of the first changed the settings already),
// the first to stop restores nothing, and the last restores the host's own values.
func TestKernelTunablesAreRestoredByTheLastSeed(t *testing.T) {
	k, get, kubeletsSet := fakeHost(t, "0")
	a, b := t.TempDir(), t.TempDir()
	if err := k.Acquire(a); err != nil {
		t.Fatal(err)
	}
	kubeletsSet("10")
	if err := k.Acquire(b); err != nil {
		t.Fatal(err)
	}
	if err := k.Release(a); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "10" {
		t.Fatalf("after the first seed stopped, kernel.panic = %s; the other seed's kubelets still need 10", got)
	}
	if users, _ := k.Users(); len(users) != 1 || users[0] != b {
		t.Fatalf("users = %v, want [%s]", users, b)
	}
	if err := k.Release(b); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "0" {
		t.Fatalf("after the last seed stopped, kernel.panic = %s, want the host's 0", got)
	}
	if err := k.Release(b); err != nil {
		t.Fatalf("releasing twice: %v", err)
	}
}

// A seed that crashed and whose state directory was removed by hand no longer counts: the next seed to
// stop is the last and restores the host's values.
func TestKernelTunablesIgnoreSeedsWhoseStateIsGone(t *testing.T) {
	k, get, kubeletsSet := fakeHost(t, "0")
	crashed, live := t.TempDir(), t.TempDir()
	if err := k.Acquire(crashed); err != nil {
		t.Fatal(err)
	}
	kubeletsSet("10")
	if err := os.RemoveAll(crashed); err != nil {
		t.Fatal(err)
	}
	if err := k.Acquire(live); err != nil {
		t.Fatal(err)
	}
	if err := k.Release(live); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "0" {
		t.Fatalf("kernel.panic = %s, want the host's 0 recorded before the crashed seed's kubelets", got)
	}
}

// The host's own value is the live one while no seed runs and the recorded one while seeds run: a value
// set while another seed's kubelets hold theirs is the one the last seed puts back, and theirs stays.
func TestKernelTunablesHostValueWhileASeedRuns(t *testing.T) {
	k, get, kubeletsSet := fakeHost(t, "1")
	if got, err := k.HostValue("kernel/panic"); err != nil || got != "1" {
		t.Fatalf("host value with no seed = %q, %v; want the live 1", got, err)
	}
	seed := t.TempDir()
	if err := k.Acquire(seed); err != nil {
		t.Fatal(err)
	}
	kubeletsSet("10")
	if got, err := k.HostValue("kernel/panic"); err != nil || got != "1" {
		t.Fatalf("host value while a seed runs = %q, %v; want the recorded 1, not the kubelets' 10", got, err)
	}
	if err := k.SetHostValue("kernel/panic", "0"); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "10" {
		t.Fatalf("kernel.panic = %s while the seed runs; its kubelets' 10 must stay", got)
	}
	if err := k.Release(seed); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "0" {
		t.Fatalf("after the last seed stopped, kernel.panic = %s, want the 0 set while it ran", got)
	}
	if err := k.SetHostValue("kernel/panic", "1"); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "1" {
		t.Fatalf("with no seed, setting the host value wrote %s, want 1", got)
	}
}

// A record that outlived its seeds (one that crashed and whose state directory is gone) still holds the
// host's own values, which the next seed to stop puts back: they, not the kubelets' live ones, are the
// host's, and a value set meanwhile goes into the record.
func TestKernelTunablesHostValueOfARecordWithoutSeeds(t *testing.T) {
	k, get, kubeletsSet := fakeHost(t, "1")
	crashed := t.TempDir()
	if err := k.Acquire(crashed); err != nil {
		t.Fatal(err)
	}
	kubeletsSet("10")
	if err := os.RemoveAll(crashed); err != nil {
		t.Fatal(err)
	}
	if got, err := k.HostValue("kernel/panic"); err != nil || got != "1" {
		t.Fatalf("host value = %q, %v; want the recorded 1, not the crashed seed's kubelets' 10", got, err)
	}
	if err := k.SetHostValue("kernel/panic", "0"); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "10" {
		t.Fatalf("kernel.panic = %s; the value set goes into the record, not live", got)
	}
	next := t.TempDir()
	if err := k.Acquire(next); err != nil {
		t.Fatal(err)
	}
	if err := k.Release(next); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "0" {
		t.Fatalf("after the next seed stopped, kernel.panic = %s, want the 0 set into the record", got)
	}
	if _, err := k.HostValue("kernel/unknown"); err == nil {
		t.Fatal("a setting the kubelets do not change was read as a host value")
	}
}
