package sidecar

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/support/benchproc"
)

// The child protocol: the parent re-executes this test binary running only TestSidecarBenchChild with the
// mode and parameters in the environment. A child prints "BENCH-READY <json>" once it serves, runs until
// its stdin is closed (or its work is done) and prints "BENCH-RESULT <json>" before exiting.
const (
	envMode     = "GARDENER_ETCD_SIDECAR_BENCH_MODE"
	envParams   = "GARDENER_ETCD_SIDECAR_BENCH_PARAMS"
	tagReady    = "BENCH-READY "
	tagResult   = "BENCH-RESULT "
	childRunArg = "-test.run=^TestSidecarBenchChild$"
)

// child is a running child process.
type child struct {
	mode  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan error
	log   strings.Builder
}

// startChild runs mode with params (marshalled as JSON) and waits for its READY line, decoded into ready.
func startChild(b *testing.B, mode string, params, ready any) *child {
	b.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], childRunArg, "-test.timeout=2h", "-test.v")
	cmd.Env = append(os.Environ(), envMode+"="+mode, envParams+"="+string(p))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	c := &child{mode: mode, cmd: cmd, lines: make(chan string, 16), done: make(chan error, 1)}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = c.stdin.Close()
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			c.log.WriteString(line + "\n")
			if strings.HasPrefix(line, tagReady) || strings.HasPrefix(line, tagResult) {
				c.lines <- line
			}
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	if ready != nil {
		c.expect(b, tagReady, ready)
	}
	return c
}

// expect waits for the next tagged line and decodes it into v.
func (c *child) expect(b *testing.B, tag string, v any) {
	b.Helper()
	line, ok := <-c.lines
	if !ok {
		err := <-c.done
		c.done <- err
		b.Fatalf("%s child ended (%v) before printing %q:\n%s", c.mode, err, tag, c.log.String())
	}
	payload, found := strings.CutPrefix(line, tag)
	if !found {
		b.Fatalf("%s child printed %q, want %q", c.mode, line, tag)
	}
	if err := json.Unmarshal([]byte(payload), v); err != nil {
		b.Fatalf("%s child result %q: %v", c.mode, payload, err)
	}
}

// finish closes the child's stdin (its signal to stop), decodes its result and waits for it to exit.
func (c *child) finish(b *testing.B, result any) {
	b.Helper()
	_ = c.stdin.Close()
	c.expect(b, tagResult, result)
	if err := <-c.done; err != nil {
		b.Fatalf("%s child: %v\n%s", c.mode, err, c.log.String())
	}
}

// childParams decodes the parameters the parent passed.
func childParams(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(os.Getenv(envParams)), v); err != nil {
		t.Fatalf("child parameters: %v", err)
	}
}

// report prints a tagged line for the parent.
func report(tag string, v any) {
	b, _ := json.Marshal(v)
	fmt.Println(tag + string(b))
}

// waitForStdinEOF blocks until the parent closes our stdin.
func waitForStdinEOF() { _, _ = io.Copy(io.Discard, os.Stdin) }

// peakRSSMiB is this process's high-water resident set size.
func peakRSSMiB(t *testing.T) float64 {
	rss, err := benchproc.PeakRSSMiB()
	if err != nil {
		t.Fatal(err)
	}
	return rss
}

// envInt reads a positive integer setting, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// processCPUSeconds is the user + system time this process has used so far.
func processCPUSeconds(t *testing.T) float64 {
	s, err := benchproc.CPUSeconds()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// clockTicks is USER_HZ, the unit of the times in /proc/<pid>/stat (100 on every Linux platform Go
// supports).
const clockTicks = 100

// cpuSecondsOf is the user + system time process pid has used so far, all its threads included; 0 when it
// cannot be read (the figure is informational).
func cpuSecondsOf(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may contain spaces) start after the last ')'.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return float64(utime+stime) / clockTicks
}

// childPID finds the process started by this one whose command name is comm (e.g. the S3 server, whose
// process the s3server helpers do not expose), or 0.
func childPID(comm string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(data[end+1:]))
		if string(data[open+1:end]) == comm && len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			return pid
		}
	}
	return 0
}
