package app

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
	"github.com/gardener-etcd/gardener-etcd/test/support/localseedtest"
)

// TestLocalUpDetachAndDown runs the real binary: `local up --detach` returns with a ready seed running
// in the background, its kubeconfig and S3 endpoint work, a second `up` is refused, and `local down`
// stops it and leaves nothing behind. The binary is built because --detach re-executes itself.
func TestLocalUpDetachAndDown(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "gardener-etcd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/gardener-etcd/gardener-etcd/cmd/gardener-etcd").CombinedOutput(); err != nil {
		t.Fatalf("building gardener-etcd: %v\n%s", err, out)
	}
	stateDir := shortStateDir(t)
	run := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, bin, append(args, "--state-dir", stateDir)...).CombinedOutput()
		t.Logf("gardener-etcd %s:\n%s", strings.Join(args, " "), out)
		return string(out), err
	}
	t.Cleanup(func() {
		if _, err := localseed.LookupInstance(stateDir); err == nil {
			_, _ = run("local", "down")
		}
	})

	begin := time.Now()
	out, err := run("local", "up", "--detach", "--s3", "--nodes", "2")
	if err != nil {
		t.Fatalf("local up --detach: %v", err)
	}
	t.Logf("DURATION local up --detach: %s", time.Since(begin).Round(time.Millisecond))
	kubeconfig := filepath.Join(stateDir, "kubeconfig")
	if !strings.Contains(out, "Kubeconfig:  "+kubeconfig) || !strings.Contains(out, "export KUBECONFIG="+kubeconfig) {
		t.Errorf("output does not name the kubeconfig %s", kubeconfig)
	}
	in, err := localseed.LookupInstance(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if !in.Running() {
		t.Fatalf("the background seed (pid %d) is not running after up returned", in.PID)
	}

	t.Run("kubeconfig works and the nodes are Ready", func(t *testing.T) {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		client := kubernetes.NewForConfigOrDie(cfg)
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) != 2 {
			t.Fatalf("want 2 nodes, got %d", len(nodes.Items))
		}
		for _, n := range nodes.Items {
			if !localseed.NodeReady(&n) {
				t.Errorf("node %s not Ready: %+v", n.Name, n.Status.Conditions)
			}
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "smoke"}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("S3 endpoint answers", func(t *testing.T) {
		endpoint := fieldAfter(out, "S3:")
		if !strings.HasPrefix(endpoint, "http://") {
			t.Fatalf("no S3 endpoint in the output (got %q)", endpoint)
		}
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(endpoint + "/health")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("S3 health: %s", resp.Status)
		}
	})

	t.Run("second up refused", func(t *testing.T) {
		out, err := run("local", "up", "--detach")
		if err == nil || !strings.Contains(out, "already runs") {
			t.Fatalf("a second up in the same state dir must be refused (err %v)", err)
		}
	})

	begin = time.Now()
	if _, err := run("local", "down"); err != nil {
		t.Fatalf("local down: %v", err)
	}
	t.Logf("DURATION local down: %s", time.Since(begin).Round(time.Millisecond))
	if in.Running() {
		t.Errorf("pid %d still runs after down", in.PID)
	}
	for _, left := range localseed.Leftovers(stateDir, in.Prefix) {
		t.Errorf("left behind: %s", left)
	}
	if out, err := run("local", "down"); err != nil || !strings.Contains(out, "No local seed") {
		t.Errorf("down without a seed must succeed and say so (err %v)", err)
	}
}

// fieldAfter returns the first word after label on the line that starts with it.
func fieldAfter(out, label string) string {
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, label); ok {
			if fields := strings.Fields(rest); len(fields) > 0 {
				return fields[0]
			}
		}
	}
	return ""
}

// TestLocalUpForegroundInterrupted: `local up` without --detach serves until SIGINT, then tears down.
func TestLocalUpForegroundInterrupted(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "gardener-etcd")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/gardener-etcd/gardener-etcd/cmd/gardener-etcd").CombinedOutput(); err != nil {
		t.Fatalf("building gardener-etcd: %v\n%s", err, out)
	}
	stateDir := shortStateDir(t)
	up := exec.CommandContext(ctx, bin, "local", "up", "--nodes", "1", "--state-dir", stateDir)
	var output strings.Builder
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	up.Stdout, up.Stderr = w, w
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	t.Cleanup(func() {
		_ = up.Process.Kill()
		if _, err := localseed.LookupInstance(stateDir); err == nil {
			_ = localseed.Down(context.Background(), stateDir)
		}
	})
	ready := make(chan bool, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			output.Write(buf[:n])
			if strings.Contains(output.String(), "Press Ctrl-C") {
				select {
				case ready <- true:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-ready:
	case <-done:
		t.Fatalf("local up exited before it was ready:\n%s", output.String())
	case <-time.After(3 * time.Minute):
		_ = up.Process.Kill()
		<-done
		t.Fatalf("local up not ready after 3 minutes:\n%s", output.String())
	}
	in, err := localseed.LookupInstance(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := up.Wait(); err != nil {
		t.Fatalf("local up after SIGINT: %v", err)
	}
	<-done
	t.Logf("output:\n%s", output.String())
	if !strings.Contains(output.String(), "nothing left behind") {
		t.Error("local up did not report its teardown")
	}
	for _, left := range localseed.Leftovers(stateDir, in.Prefix) {
		t.Errorf("left behind: %s", left)
	}
}

// shortStateDir is a new state directory short enough for real nodes (t.TempDir's path, named after the
// test, leaves too little room for the kubelets' unix sockets). The seed removes it on down; whatever a
// failed test left is for Down, which the tests' cleanups run.
func shortStateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ge-local-")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
