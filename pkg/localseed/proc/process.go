// Package proc runs the local seed's host processes (control plane, S3 server, pod containers) as
// supervised children: one log file each, killed with the parent, stopped gracefully.
package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Spec describes a process to start. It is plain data so that callers can build it declaratively.
type Spec struct {
	// Path is the executable; Args excludes argv[0].
	Path string
	Args []string
	// Env replaces the environment when not nil.
	Env []string
	// Dir is the working directory.
	Dir string
	// LogPath receives stdout and stderr, appended, so restarts of one container share one file.
	LogPath string
	// Cloneflags adds namespaces to the child (e.g. CLONE_NEWNS for a private mount namespace).
	Cloneflags uintptr
}

// Process is a started child. It always gets SIGKILL when the seed process dies (Pdeathsig), so a
// crashed seed never leaves its children running.
type Process struct {
	cmd    *exec.Cmd
	log    *os.File
	exited chan struct{}
	// Started is when the process was started.
	Started time.Time
	// Finished is set when the process exited (read after Exited is closed).
	Finished time.Time
}

// Start starts the process described by spec.
func Start(spec Spec) (*Process, error) {
	logFile, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log file for %s: %w", spec.Path, err)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true, Cloneflags: spec.Cloneflags}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", spec.Path, err)
	}
	p := &Process{cmd: cmd, log: logFile, exited: make(chan struct{}), Started: time.Now()}
	go func() {
		_ = cmd.Wait()
		p.Finished = time.Now()
		_ = logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ExitCode is the exit code after Exited (128+signal for a signalled process, like a shell reports it).
func (p *Process) ExitCode() int {
	state := p.cmd.ProcessState
	if state == nil {
		return -1
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}

// Signal sends sig to the process group, so helpers a program forked die with it.
func (p *Process) Signal(sig syscall.Signal) {
	if !p.Running() {
		return
	}
	_ = syscall.Kill(-p.Pid(), sig)
}

// Stop sends SIGTERM, waits up to grace and then SIGKILLs; it returns once the process is gone.
// It reports an error when the process had to be killed, because a graceful stop was asked for.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Running() {
		return nil
	}
	p.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		return nil
	case <-timer.C:
	}
	p.Signal(syscall.SIGKILL)
	<-p.exited
	return errors.New("process ignored SIGTERM and was killed")
}
