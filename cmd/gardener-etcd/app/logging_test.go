package app

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// The tests of the global logger run the root command in a child process (this test binary, re-executed):
// controller-runtime keeps the first logger it is given and writes its warning straight to os.Stderr, so
// neither can be observed in the test process itself.
const (
	childArgsEnv  = "GARDENER_ETCD_TEST_CHILD_ARGS"
	childDelayEnv = "GARDENER_ETCD_TEST_CHILD_DELAY"
	probeMessage  = "probe through controller-runtime's global log"
)

func TestMain(m *testing.M) {
	if args := os.Getenv(childArgsEnv); args != "" {
		runChild(strings.Fields(args))
		os.Exit(0)
	}
	os.Exit(stopAPIServer(m.Run()))
}

// runChild runs the root command with args (its error is expected: there is no apiserver), then logs through
// controller-runtime's package-level log the way its client does.
func runChild(args []string) {
	if d, err := time.ParseDuration(os.Getenv(childDelayEnv)); err == nil {
		time.Sleep(d)
	}
	root := NewRootCommand(os.Stdout, os.Stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stdout, "error:", err)
	}
	logf.Log.WithName("test").Info(probeMessage)
}

// runCommandInChild runs `shoot destroy` (which creates a controller-runtime client) against an address
// where nothing listens and returns the child's stderr.
func runCommandInChild(t *testing.T, delay time.Duration, extraArgs ...string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"shoot", "destroy", "-n", "shoot--test", "--role", "main", "--wait=false", "--kubeconfig", kubeconfig}, extraArgs...)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(args, " "), childDelayEnv+"="+delay.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("child stdout:\n%s", stdout.String())
	return stderr.String()
}

// TestVerboseReachesGlobalLog: with -v, what controller-runtime logs through its package-level log shows.
func TestVerboseReachesGlobalLog(t *testing.T) {
	t.Parallel()
	stderr := runCommandInChild(t, 0, "-v")
	if !strings.Contains(stderr, probeMessage) {
		t.Errorf("with -v, controller-runtime's global log did not reach stderr:\n%s", stderr)
	}
}

// TestQuietByDefault: without -v, stderr stays empty, also when controller-runtime's log is first used
// more than 30 s after start (its deadline for a logger before it prints a warning with a stack trace).
func TestQuietByDefault(t *testing.T) {
	t.Parallel()
	delay := time.Duration(0)
	if !testing.Short() {
		delay = 31 * time.Second
	}
	stderr := runCommandInChild(t, delay)
	if strings.Contains(stderr, "log.SetLogger(...) was never called") {
		t.Errorf("controller-runtime warned that no logger was set:\n%s", stderr)
	}
	if strings.TrimSpace(stderr) != "" {
		t.Errorf("without -v, stderr is not empty:\n%s", stderr)
	}
}
