package benchproc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a binary a benchmark runs as one of its sides (an etcdbrctl, ours or upstream's), measured from
// outside the same way for any binary, whatever it logs about itself: its CPU time from the kernel's
// accounting when it has exited (wait4's rusage), its peak RSS from its VmHWM, read every
// hwmInterval while it runs. wait4's ru_maxrss cannot serve: exec records the high-water mark of the
// memory the child shared with this process until then, so every child would report at least the
// benchmark's own peak.
type Proc struct {
	// Started is when the process was started; a side's wall time is measured from here.
	Started time.Time

	name   string
	cmd    *exec.Cmd
	mu     sync.Mutex
	output strings.Builder
	lines  []string
	notify chan struct{} // closed and replaced whenever a line arrives or the output ends
	ended  bool
	exited chan struct{}
	// exitedAt is when wait4 returned; read only after exited is closed.
	exitedAt time.Time
	// hwmKiB is the highest VmHWM read; written by the sampler, read after it ended (sampled closed).
	hwmKiB  int64
	sampled chan struct{}
}

// hwmInterval is how often a Proc's VmHWM is read; growth in its last interval before exiting is missed.
const hwmInterval = 5 * time.Millisecond

// Usage is what the kernel accounted for a process that has exited.
type Usage struct {
	Seconds    float64 // wall time from Started to the exit
	CPUSeconds float64 // user + system time (rusage)
	PeakRSSMiB float64 // the highest VmHWM read: the process's high-water resident set size
}

// Command is what Start runs.
type Command struct {
	Binary string
	Args   []string
	// Env is added to this process's environment, from which every variable starting with one of
	// DropEnvPrefixes is removed first (e.g. "AWS_": a developer's settings must not reach a store client).
	Env             []string
	DropEnvPrefixes []string
}

// Start runs c. Its standard output and error are kept, line by line, for WaitForLine and error
// messages.
func Start(c Command) (*Proc, error) {
	binary := c.Binary
	p := &Proc{name: binary, notify: make(chan struct{}), exited: make(chan struct{}), sampled: make(chan struct{})}
	p.cmd = exec.Command(binary, c.Args...)
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(c.DropEnvPrefixes, func(prefix string) bool { return strings.HasPrefix(kv, prefix) }) {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env, c.Env...)
	// The binary never outlives the benchmark, even when the benchmark is killed.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	p.Started = time.Now()
	err = p.cmd.Start()
	_ = w.Close() // the child holds its own copy; the reader ends when the child's is closed
	if err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	waited := make(chan struct{})
	go p.sampleHWM(waited)
	go func() {
		_ = p.cmd.Wait()
		p.exitedAt = time.Now()
		close(waited)
	}()
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.addLine(sc.Text())
		}
		_, _ = io.Copy(io.Discard, r) // after an overlong line: drain, so that the child never blocks
	}()
	go func() {
		<-waited
		// A process the binary started may hold the output open after the binary's exit: its last
		// lines are read, and then no more is waited for.
		select {
		case <-read:
		case <-time.After(time.Second):
		}
		_ = r.Close()
		p.mu.Lock()
		p.ended = true
		close(p.notify)
		p.mu.Unlock()
		<-p.sampled
		close(p.exited)
	}()
	return p, nil
}

// sampleHWM reads the process's VmHWM until it has exited. Start returns after the exec, so every read
// is of the binary's own memory.
func (p *Proc) sampleHWM(waited <-chan struct{}) {
	defer close(p.sampled)
	status := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
	t := time.NewTicker(hwmInterval)
	defer t.Stop()
	for {
		if data, err := os.ReadFile(status); err == nil {
			for line := range strings.SplitSeq(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil {
						p.hwmKiB = max(p.hwmKiB, kb)
					}
				}
			}
		}
		select {
		case <-waited:
			return
		case <-t.C:
		}
	}
}

func (p *Proc) addLine(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.output.WriteString(line + "\n")
	p.lines = append(p.lines, line)
	if !p.ended {
		close(p.notify)
		p.notify = make(chan struct{})
	}
}

// Pid is the process's id, for reading its accounting in /proc while it runs.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Output is what the process printed so far.
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

// WaitForLine returns the first line of output, since the process started, that matches re, and the
// time it was seen. It fails when the process exits or timeout passes before one does.
func (p *Proc) WaitForLine(re *regexp.Regexp, timeout time.Duration) (string, time.Time, error) {
	deadline := time.After(timeout)
	seen := 0
	for {
		p.mu.Lock()
		lines, notify, ended := p.lines, p.notify, p.ended
		p.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if re.MatchString(lines[seen]) {
				return lines[seen], time.Now(), nil
			}
		}
		if ended {
			return "", time.Time{}, fmt.Errorf("%s exited (%s) before printing a line matching %q:\n%s", p.name, p.cmd.ProcessState, re, p.Output())
		}
		select {
		case <-notify:
		case <-deadline:
			return "", time.Time{}, fmt.Errorf("%s printed no line matching %q within %s:\n%s", p.name, re, timeout, p.Output())
		}
	}
}

// Wait waits for the process to exit on its own and fails unless it exits with status 0.
func (p *Proc) Wait() (Usage, error) {
	<-p.exited
	if !p.cmd.ProcessState.Success() {
		return Usage{}, fmt.Errorf("%s: %s:\n%s", p.name, p.cmd.ProcessState, p.Output())
	}
	return p.usage()
}

// Stop ends the process with SIGTERM (SIGKILL after a minute) and returns its usage; how it exits does
// not matter (a sidecar stopped by a signal may exit non-zero).
func (p *Proc) Stop() (Usage, error) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(time.Minute):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	return p.usage()
}

func (p *Proc) usage() (Usage, error) {
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return Usage{}, errors.New("no rusage for " + p.name)
	}
	return Usage{
		Seconds:    p.exitedAt.Sub(p.Started).Seconds(),
		CPUSeconds: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(),
		PeakRSSMiB: float64(p.hwmKiB) / 1024,
	}, nil
}
