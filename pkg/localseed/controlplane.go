package localseed

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
)

// Time limits of the control plane. The apiserver on a busy 2-core machine takes 5-20 s to become ready.
const (
	componentReadyTimeout = 90 * time.Second
	componentStopGrace    = 10 * time.Second
	// apiserverPort is fixed: the apiserver binds the instance's own bridge address, which no other
	// instance uses.
	apiserverPort = 6443
	// serviceCIDR is the ClusterIP range; kube-proxy routes it on the nodes.
	serviceCIDR = "10.96.0.0/16"
)

// kubeControllers are the kube-controller-manager controllers the etcd stack relies on: workloads
// (StatefulSets, Deployments for druid and the extension, Jobs for compaction), PDBs, endpoints, garbage
// collection, namespaces, volume binding and protection, service accounts and their tokens, the
// kube-root-ca.crt publisher (projected tokens mount it) and node lifecycle (taints on lost nodes).
var kubeControllers = []string{
	"statefulset-controller", "deployment-controller", "replicaset-controller", "job-controller",
	"cronjob-controller", "ttl-after-finished-controller", "disruption-controller", "endpoints-controller",
	"endpointslice-controller", "endpointslice-mirroring-controller", "garbage-collector-controller",
	"namespace-controller", "persistentvolume-binder-controller", "persistentvolume-protection-controller",
	"persistentvolumeclaim-protection-controller", "serviceaccount-controller", "serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller", "node-lifecycle-controller", "taint-eviction-controller",
	"pod-garbage-collector-controller", "clusterrole-aggregation-controller",
}

// component is one control-plane process. spec and ready are kept so that an outage method (e.g.
// StartAPIServer) can start it again as it was.
type component struct {
	name  string
	p     *proc.Process
	spec  proc.Spec
	ready func(context.Context) bool
}

// controlPlane starts the four processes in order, each ready before the next starts.
type controlPlane struct {
	binDir, stateDir string
	pki              *pki
	bridgeIP         net.IP
	kubeconfig       string
	server           string
	components       []component
}

func (cp *controlPlane) start(ctx context.Context, restCfg *rest.Config) error {
	etcdClient, etcdPeer, err := freePort(), freePort(), error(nil)
	if etcdClient == 0 || etcdPeer == 0 {
		return errors.New("no free port on 127.0.0.1 for etcd")
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	if err = cp.run(ctx, "etcd", []string{
		"--name=localseed", "--data-dir=" + filepath.Join(cp.stateDir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=localseed=" + peerURL, "--unsafe-no-fsync=true", "--log-level=warn",
	}, httpReady(etcdURL+"/health", nil)); err != nil {
		return err
	}
	p := cp.pki
	if err = cp.run(ctx, apiserverComponent, []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + cp.bridgeIP.String(), "--advertise-address=" + cp.bridgeIP.String(),
		"--secure-port=" + strconv.Itoa(apiserverPort), "--cert-dir=" + filepath.Join(cp.stateDir, "kube-apiserver"),
		"--tls-cert-file=" + p.servingCert, "--tls-private-key-file=" + p.servingKey, "--client-ca-file=" + p.caCert,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.serviceAccPub, "--service-account-signing-key-file=" + p.serviceAccountKey,
		"--service-cluster-ip-range=" + serviceCIDR,
		// Real nodes authenticate as system:node:<name>: the Node authorizer and NodeRestriction confine each
		// kubelet to its own node and pods; the apiserver reaches the kubelets (logs, exec) as admin.
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate=" + p.adminCert, "--kubelet-client-key=" + p.adminKey,
		"--enable-aggregator-routing=true", "--allow-privileged=true",
	}, apiserverReady(restCfg)); err != nil {
		return err
	}
	// kube-controller-manager authenticates as in a real cluster, system:kube-controller-manager, which
	// druid's member pods webhook recognizes; with --use-service-account-credentials=false it acts as itself
	// for every controller, so it also gets system:masters.
	kcmKubeconfig, err := p.clientKubeconfig("kube-controller-manager", cp.server, "system:kube-controller-manager", "system:masters")
	if err != nil {
		return err
	}
	for _, name := range []string{"kube-controller-manager", "kube-scheduler"} {
		port := freePort()
		kubeconfig := cp.kubeconfig
		if name == "kube-controller-manager" {
			kubeconfig = kcmKubeconfig
		}
		args := []string{
			"--kubeconfig=" + kubeconfig, "--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig, "--leader-elect=false",
			"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(cp.stateDir, name),
		}
		if name == "kube-controller-manager" {
			args = append(args, "--controllers="+strings.Join(kubeControllers, ","),
				"--service-account-private-key-file="+p.serviceAccountKey, "--root-ca-file="+p.caCert,
				"--use-service-account-credentials=false", "--cluster-name=gardener-etcd-local")
		}
		insecure := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed health endpoint on loopback
		if err := cp.run(ctx, name, args, httpReady(fmt.Sprintf("https://127.0.0.1:%d/healthz", port), insecure)); err != nil {
			return err
		}
	}
	return nil
}

// run starts one binary with its log in <state>/logs and waits until ready answers true.
func (cp *controlPlane) run(ctx context.Context, name string, args []string, ready func(context.Context) bool) error {
	bin := filepath.Join(cp.binDir, name)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s not found in %s: run `make tools` first (or set %s)", name, cp.binDir, BinDirEnv)
	}
	spec := proc.Spec{Path: bin, Args: args, LogPath: filepath.Join(cp.stateDir, "logs", name+".log")}
	p, err := proc.Start(spec)
	if err != nil {
		return err
	}
	cp.components = append(cp.components, component{name: name, p: p, spec: spec, ready: ready})
	return waitReady(ctx, name, p, cp.logPath(name), ready)
}

// waitReady polls ready until it answers true, the process exits or the start-up time is over.
func waitReady(ctx context.Context, name string, p *proc.Process, logPath string, ready func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, componentReadyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !ready(ctx) {
		select {
		case <-p.Exited():
			return fmt.Errorf("%s exited during start-up (code %d); see %s", name, p.ExitCode(), logPath)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s; see %s", name, componentReadyTimeout, logPath)
		case <-tick.C:
		}
	}
	return nil
}

func (cp *controlPlane) logPath(name string) string {
	return filepath.Join(cp.stateDir, "logs", name+".log")
}

// stop stops the components in reverse start order.
func (cp *controlPlane) stop() error {
	var errs []error
	for i := len(cp.components) - 1; i >= 0; i-- {
		c := cp.components[i]
		if err := c.p.Stop(componentStopGrace); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
		}
	}
	cp.components = nil
	return errors.Join(errs...)
}

func httpReady(url string, tlsConfig *tls.Config) func(context.Context) bool {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	return func(ctx context.Context) bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

func apiserverReady(cfg *rest.Config) func(context.Context) bool {
	return func(ctx context.Context) bool {
		transport, err := rest.TransportFor(cfg)
		if err != nil {
			return false
		}
		client := &http.Client{Timeout: 2 * time.Second, Transport: transport}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}

// freePort returns a port on 127.0.0.1 that was free a moment ago (0 on failure).
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
