package localseed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/kubeletnode"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/seednet"
	"github.com/gardener-etcd/gardener-etcd/test/support/localseedtest"
)

// The crash test re-executes its own binary as the seed that crashes; the variable tells the child where
// to put its state.
const (
	crashChildStateEnv = "LOCALSEED_TEST_CRASH_CHILD_STATE_DIR"
	crashChildReady    = "CRASH CHILD READY"
)

// TestDownAfterCrash starts a one-node seed with a running pod in a child process, kills it with SIGKILL
// (no teardown runs) and checks that Down removes every process (control plane, node components, container
// shims and containers), network namespace, link, mount, cgroup and the state directory, and puts the kernel
// settings the kubelet changed back.
func TestDownAfterCrash(t *testing.T) {
	if dir := os.Getenv(crashChildStateEnv); dir != "" {
		runCrashChild(t, dir)
		return
	}
	localseedtest.SkipUnlessPossible(t)
	localseedtest.SkipUnlessNodeTools(t, NodeTools)
	defer expectKernelSettingKept(t)()
	// Not below t.TempDir(): its path (named after the test) is too long for a node's sockets.
	stateDir, err := os.MkdirTemp("", "ls-crash-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = removeStateDir(stateDir) })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	child.Env = append(os.Environ(), crashChildStateEnv+"="+stateDir)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = child.Stdout
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = child.Process.Kill()
			_ = child.Wait()
		}
		if _, err := os.Stat(filepath.Join(stateDir, instanceFile)); err == nil {
			_ = Down(context.Background(), stateDir)
		}
	})
	waitForLine(t, stdout, crashChildReady, 3*time.Minute)

	data, err := os.ReadFile(filepath.Join(stateDir, instanceFile))
	if err != nil {
		t.Fatal(err)
	}
	var in instance
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatal(err)
	}
	if netns, links := seednet.Leftovers(in.Prefix); len(netns) == 0 || len(links) == 0 {
		t.Fatalf("the child seed should have a pod network: namespaces %v, links %v", netns, links)
	}
	if pids := processesMentioning(stateDir); len(pids) == 0 {
		t.Fatal("the child seed should have control-plane processes")
	}
	if cgroups := kubeletnode.CgroupsOf(in.Prefix + "-*"); len(cgroups) == 0 {
		t.Fatal("the child seed's node should have cgroups")
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed = true
	begin := time.Now()
	if err := Down(ctx, stateDir); err != nil {
		t.Fatalf("Down: %v", err)
	}
	t.Logf("DURATION Down after SIGKILL: %s", time.Since(begin).Round(time.Millisecond))
	assertNothingLeft(t, stateDir, in.Prefix)
	if err := Down(ctx, stateDir); err == nil {
		t.Error("Down on a removed state dir must fail: it holds no instance")
	}
}

// waitForLine reads r until a line equals want, failing after timeout.
func waitForLine(t *testing.T, r interface{ Read([]byte) (int, error) }, want string, timeout time.Duration) {
	t.Helper()
	found := make(chan bool, 1)
	go func() {
		scanner := bufio.NewScanner(r)
		for scanner.Scan() {
			t.Log("child: " + scanner.Text())
			if scanner.Text() == want {
				found <- true
				// Keep draining, so the child never blocks on a full pipe.
				for scanner.Scan() {
				}
				return
			}
		}
		found <- false
	}()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("the child exited before printing %q", want)
		}
	case <-time.After(timeout):
		t.Fatalf("the child did not print %q within %s", want, timeout)
	}
}

// runCrashChild is the crashing seed: it starts a one-node seed with a running pod of the test image
// pushed to the seed's registry, reports it and waits to be killed.
func runCrashChild(t *testing.T, stateDir string) {
	ctx := context.Background()
	seed, err := Start(ctx, Options{StateDir: stateDir, Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	image, err := seed.PushImage(ctx, "../..", imagebuild.Binary{Name: "httpecho", Package: "./pkg/localseed/testdata/httpecho"})
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(seed.RESTConfig())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: "default"}, Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To(int64(1)),
		Containers:                    []corev1.Container{{Name: "echo", Image: image}},
		Volumes:                       []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPod(ctx, t, client, "default", "victim", isReady)
	fmt.Println(crashChildReady)
	select {}
}

// kernelPanicSetting is one of the host-wide settings every kubelet changes (to 10), named below /proc/sys.
const kernelPanicSetting = "kernel/panic"

// expectKernelSettingKept makes the host's own kernel.panic a value the kubelets change (to 10) and returns
// the check, to run after the seed is gone, that it still is. The host's own value is the recorded one
// while other seeds of this host run (make test runs seed packages in parallel; the last to stop puts it
// back, see kubeletnode.KernelTunables), so the check holds whichever seed stops last. The value the host
// had is put back at the end.
func expectKernelSettingKept(t *testing.T) func() {
	t.Helper()
	host := kubeletnode.HostKernelTunables
	original, err := host.HostValue(kernelPanicSetting)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := host.SetHostValue(kernelPanicSetting, original); err != nil {
			t.Errorf("putting the host's kernel.panic %s back: %v", original, err)
		}
	})
	if err := host.SetHostValue(kernelPanicSetting, "0"); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if others, err := host.Users(); err == nil && len(others) > 0 {
			t.Logf("other seeds run (%v): the host's kernel.panic is checked in the record their last one restores", others)
		}
		if got, err := host.HostValue(kernelPanicSetting); err != nil || got != "0" {
			t.Errorf("the host's kernel.panic is %q (%v) after the seed, was 0 before it", got, err)
		}
	}
}

// TestStateDirWithMountsIsKept: a directory with anything mounted below it (a volume, a container's root
// file system, possibly a bind mount of host data) is never removed.
func TestStateDirWithMountsIsKept(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	dir := t.TempDir()
	mounted := filepath.Join(dir, "nodes", "volume")
	if err := os.MkdirAll(mounted, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "tmpfs", mounted).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mounted).Run() })
	if err := os.WriteFile(filepath.Join(mounted, "data"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := removeStateDir(dir); err == nil {
		t.Fatal("removeStateDir removed a directory with a mount below it")
	}
	if data, err := os.ReadFile(filepath.Join(mounted, "data")); err != nil || string(data) != "keep" {
		t.Fatalf("the mounted data is gone: %q %v", data, err)
	}
	if out, err := exec.Command("umount", mounted).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v: %s", err, out)
	}
	if err := removeStateDir(dir); err != nil {
		t.Fatalf("removeStateDir without mounts: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still exists: %v", dir, err)
	}
}
