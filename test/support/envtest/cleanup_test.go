package envtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const crashChildEnv = "GARDENER_ETCD_ENVTEST_CRASH_CHILD"

// TestStopLeavesNoProcess starts and stops a control plane and checks that none of its processes remain.
func TestStopLeavesNoProcess(t *testing.T) {
	skipIfShort(t)
	e, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	markers := []string{e.ControlPlane.APIServer.CertDir, e.ControlPlane.Etcd.DataDir}
	if len(processesMentioning(markers)) != 2 {
		t.Fatalf("expected the apiserver and etcd to run, found %v", processesMentioning(markers))
	}
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	if pids := processesMentioning(markers); len(pids) > 0 {
		t.Fatalf("processes left after Stop: %v", pids)
	}
}

// TestCrashedTestBinaryLeavesNoProcess runs this test binary as a child that starts a control plane and
// exits without stopping it, as a panicking or timed-out test does; its apiserver and etcd must die with it.
func TestCrashedTestBinaryLeavesNoProcess(t *testing.T) {
	skipIfShort(t)
	if os.Getenv(crashChildEnv) == "1" {
		e, err := Start(Options{})
		if err != nil {
			fmt.Println("START-FAILED", err)
			os.Exit(2)
		}
		fmt.Println("MARKER", e.ControlPlane.APIServer.CertDir)
		fmt.Println("MARKER", e.ControlPlane.Etcd.DataDir)
		fmt.Println("MARKER", e.wrapperDir)
		fmt.Println("MARKER", e.WebhookInstallOptions.LocalServingCertDir) // envtest makes one even without webhooks
		os.Exit(3)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashedTestBinaryLeavesNoProcess$")
	// KUBEBUILDER_ASSETS as the Makefile exports it: envtest prefers it over its asset directory, which once
	// bypassed the wrapper.
	binDir, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), crashChildEnv+"=1", "KUBEBUILDER_ASSETS="+binDir)
	out, err := cmd.Output()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 3 {
		t.Fatalf("child should have started a control plane and exited with 3, got %v; output:\n%s", err, out)
	}
	var markers []string
	scanner := bufio.NewScanner(bytes.NewReader(out))
	for scanner.Scan() {
		if marker, ok := strings.CutPrefix(scanner.Text(), "MARKER "); ok && marker != "" {
			markers = append(markers, marker)
		}
	}
	t.Cleanup(func() {
		for _, dir := range markers {
			_ = os.RemoveAll(dir)
		}
	})
	if len(markers) < 2 {
		t.Fatalf("child printed no markers:\n%s", out)
	}

	// SIGKILL arrives at once, but a killed process still has to finish the system call it is in (e.g. an
	// fsync of etcd) and release its memory; on a loaded 2-core machine that has been seen to take more
	// than 15 s. A process that survives the deadline is reported with its state, to tell "still exiting"
	// (D, R) from "never signalled" (S).
	deadline := time.Now().Add(60 * time.Second)
	for pids := processesMentioning(markers[:2]); len(pids) > 0; pids = processesMentioning(markers[:2]) {
		if time.Now().After(deadline) {
			description := describeProcesses(pids)
			for _, pid := range pids { // do not leave them running after the failure is reported
				if n, err := strconv.Atoi(pid); err == nil {
					_ = syscall.Kill(n, syscall.SIGKILL)
				}
			}
			t.Fatalf("control-plane processes outlived the crashed test binary:\n%s", description)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func skipIfShort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane: integration test")
	}
}

// processesMentioning returns the PIDs whose command line contains any of the markers.
func processesMentioning(markers []string) []string {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []string
	for _, path := range cmdlines {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		cmdline := string(data)
		for _, marker := range markers {
			if marker != "" && strings.Contains(cmdline, marker) {
				pids = append(pids, filepath.Base(filepath.Dir(path)))
				break
			}
		}
	}
	return pids
}

// describeProcesses returns the name, state and parent of each PID, from /proc/<pid>/status.
func describeProcesses(pids []string) string {
	var b strings.Builder
	for _, pid := range pids {
		data, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", pid, err)
			continue
		}
		fields := map[string]string{}
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				fields[k] = strings.TrimSpace(v)
			}
		}
		fmt.Fprintf(&b, "%s: name=%s state=%s ppid=%s sigpnd=%s shdpnd=%s\n", pid, fields["Name"], fields["State"], fields["PPid"], fields["SigPnd"], fields["ShdPnd"])
	}
	return b.String()
}
