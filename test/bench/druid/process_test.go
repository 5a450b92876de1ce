package druid

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// clockTicksPerSecond is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTicksPerSecond = 100

// druidUnderTest is a druid the benchmark runs: ours, built from this checkout (or $DRUID_BENCH_BINARY),
// or upstream etcd-druid's release, each with the flags that give both the same work: leader election
// and metrics listeners off (upstream's metrics on a free port: it has no switch), 10 Etcd workers.
type druidUnderTest struct {
	name string // "ours" or "upstream"
	bin  string
	args []string
}

// ourDruid builds cmd/etcd-druid of this checkout into dir, or takes $DRUID_BENCH_BINARY (a druid built
// elsewhere, e.g. from main, to compare against in the same run of the control plane's binaries).
func ourDruid(dir string) (druidUnderTest, error) {
	d := druidUnderTest{name: "ours", bin: os.Getenv("DRUID_BENCH_BINARY"), args: []string{
		"--leader-election=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--etcd-workers=" + strconv.Itoa(workers),
		"--etcd-wrapper-image=example.org/etcd-wrapper:v1", "--backup-restore-image=example.org/etcdbrctl:v1",
	}}
	if d.bin != "" {
		return d, nil
	}
	root, err := envtest.ProjectRoot()
	if err != nil {
		return d, err
	}
	d.bin = filepath.Join(dir, "etcd-druid")
	cmd := exec.Command("go", "build", "-o", d.bin, "./cmd/etcd-druid")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return d, fmt.Errorf("building etcd-druid: %w\n%s", err, out)
	}
	return d, nil
}

// upstreamDruid is upstream etcd-druid v0.38.1 as `make tools-upstream` links it (bin/upstream-etcd-druid;
// $UPSTREAM_ETCD_DRUID_BIN points elsewhere). It runs on the same CRDs (the chart's are upstream's), with
// its default configuration and the images of its own image vector; its webhooks are off by default.
// Upstream's metrics address is host and port joined, so port 0 puts it on a free port of localhost.
func upstreamDruid() (druidUnderTest, error) {
	bin, err := childproc.FindBinary("upstream-etcd-druid", "UPSTREAM_ETCD_DRUID_BIN")
	if err != nil {
		return druidUnderTest{}, fmt.Errorf("the upstream half needs upstream etcd-druid: %w (upstream's binaries are built by `make tools-upstream`, which `make bench-druid` runs)", err)
	}
	return druidUnderTest{name: "upstream", bin: bin, args: []string{
		"--metrics-bind-address=127.0.0.1", "--metrics-port=0",
		"--etcd-workers=" + strconv.Itoa(workers),
	}}, nil
}

// druidProcess is etcd-druid running as its own process, as on a seed, so that its CPU time and peak
// RSS are its own and not the benchmark's.
type druidProcess struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan error
}

// startDruidProcess runs d against the apiserver of kubeconfig, with the kubeconfig found through
// $KUBECONFIG (the way every druid version finds it).
func startDruidProcess(d druidUnderTest, kubeconfig, logPath string) (*druidProcess, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(d.bin, d.args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// druid dies with the benchmark even when the benchmark is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", d.bin, err)
	}
	p := &druidProcess{cmd: cmd, logPath: logPath, exited: make(chan error, 1)}
	go func() {
		p.exited <- cmd.Wait()
		_ = logFile.Close()
	}()
	return p, nil
}

// stop ends druid with SIGTERM (its graceful shutdown) and waits for it.
func (p *druidProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// alive fails with the tail of druid's log when it exited.
func (p *druidProcess) alive() error {
	select {
	case err := <-p.exited:
		p.exited <- err
		return fmt.Errorf("etcd-druid exited (%v); log %s ends with:\n%s", err, p.logPath, tail(p.logPath, 20))
	default:
		return nil
	}
}

func tail(path string, lines int) string {
	data, _ := os.ReadFile(path)
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// cpuSeconds is the user + system CPU time of pid so far.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may contain spaces; the fields after it start with the state (3rd).
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return (utime + stime) / clockTicksPerSecond, nil
}

// peakRSSBytes is the high-water mark of pid's resident set (VmHWM).
func peakRSSBytes(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kib << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmHWM", pid)
}
