package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
)

// probe runs the container's startup, readiness and liveness probes against process p until ctx ends.
func (r *containerRunner) probe(ctx context.Context, p *proc.Process) {
	if sp := r.c.StartupProbe; sp != nil {
		if !r.loop(ctx, sp, p, func(ok bool, consecutive int) bool {
			if ok {
				return true
			}
			if consecutive >= int(threshold(sp.FailureThreshold, 3)) {
				r.kill(p, sp, "startup")
				return true
			}
			return false
		}) {
			return
		}
	}
	r.setStarted()
	if rp := r.c.ReadinessProbe; rp != nil {
		go r.loop(ctx, rp, p, func(ok bool, consecutive int) bool {
			switch {
			case ok && consecutive >= int(threshold(rp.SuccessThreshold, 1)):
				r.setReady(true)
			case !ok && consecutive >= int(threshold(rp.FailureThreshold, 3)):
				r.setReady(false)
			}
			return false
		})
	} else if !r.init {
		r.setReady(true)
	}
	if lp := r.c.LivenessProbe; lp != nil {
		r.loop(ctx, lp, p, func(ok bool, consecutive int) bool {
			if !ok && consecutive >= int(threshold(lp.FailureThreshold, 3)) {
				r.kill(p, lp, "liveness")
				return true
			}
			return false
		})
	}
}

// loop probes every period after the initial delay and hands each result with the number of consecutive
// equal results to decide, until decide returns true (then loop returns true) or ctx ends (false).
func (r *containerRunner) loop(ctx context.Context, probe *corev1.Probe, p *proc.Process, decide func(ok bool, consecutive int) bool) bool {
	period := time.Duration(threshold(probe.PeriodSeconds, 10)) * time.Second
	if !sleepCtx(ctx, time.Duration(probe.InitialDelaySeconds)*time.Second) {
		return false
	}
	last, consecutive := false, 0
	for {
		err := r.check(ctx, probe, p)
		ok := err == nil
		if ctx.Err() != nil {
			return false
		}
		if ok == last {
			consecutive++
		} else {
			last, consecutive = ok, 1
		}
		if !ok {
			r.log.V(1).Info("Probe failed", "reason", err.Error())
		}
		if decide(ok, consecutive) {
			return true
		}
		if !sleepCtx(ctx, period) {
			return false
		}
	}
}

func (r *containerRunner) kill(p *proc.Process, probe *corev1.Probe, kind string) {
	grace := r.w.grace()
	if probe.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*probe.TerminationGracePeriodSeconds) * time.Second
	}
	r.log.Info("Probe failed, killing container", "probe", kind, "grace", grace.String())
	go func() { _ = p.Stop(grace) }()
}

// check runs one probe attempt.
func (r *containerRunner) check(ctx context.Context, probe *corev1.Probe, p *proc.Process) error {
	timeout := time.Duration(threshold(probe.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch h := probe.ProbeHandler; {
	case h.HTTPGet != nil:
		return r.checkHTTP(ctx, h.HTTPGet, timeout)
	case h.TCPSocket != nil:
		port, err := r.port(h.TCPSocket.Port)
		if err != nil {
			return err
		}
		host := h.TCPSocket.Host
		if host == "" {
			host = r.w.podIP()
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	case h.Exec != nil:
		return r.checkExec(ctx, h.Exec.Command, p)
	}
	return fmt.Errorf("unsupported probe handler (supported: httpGet, tcpSocket, exec)")
}

func (r *containerRunner) checkHTTP(ctx context.Context, get *corev1.HTTPGetAction, timeout time.Duration) error {
	port, err := r.port(get.Port)
	if err != nil {
		return err
	}
	host := get.Host
	if host == "" {
		host = r.w.podIP()
	}
	scheme := "http"
	if get.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), get.Path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	for _, hdr := range get.HTTPHeaders {
		req.Header.Add(hdr.Name, hdr.Value)
	}
	// The kubelet does not verify probe certificates either.
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}} //nolint:gosec
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe %s answered %d", url, resp.StatusCode)
	}
	return nil
}

// checkExec runs the command inside the container's namespaces and root (nsenter), with its credentials
// and environment.
func (r *containerRunner) checkExec(ctx context.Context, command []string, p *proc.Process) error {
	if len(command) == 0 {
		return fmt.Errorf("exec probe without command")
	}
	args := []string{"-t", strconv.Itoa(p.Pid()), "-m", "-n", "-u", "-r", "-w"}
	uid, gid, _ := credentials(r.w.current(), r.c)
	if uid != nil {
		args = append(args, "-S", strconv.FormatInt(*uid, 10))
	}
	if gid != nil {
		args = append(args, "-G", strconv.FormatInt(*gid, 10))
	}
	cmd := exec.CommandContext(ctx, "nsenter", append(append(args, "--"), command...)...)
	r.mu.Lock()
	cmd.Env = r.env
	r.mu.Unlock()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("exec probe %v: %w: %s", command, err, out)
	}
	return nil
}

// port resolves a numeric or named container port.
func (r *containerRunner) port(p intstr.IntOrString) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	for _, cp := range r.c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("container has no port named %q", p.StrVal)
}

func threshold(v, def int32) int32 {
	if v <= 0 {
		return def
	}
	return v
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
