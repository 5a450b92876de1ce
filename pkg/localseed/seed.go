// Package localseed is the project's embedded local seed, a launcher of real Kubernetes components: the
// control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler as host processes), a
// registry, real nodes (kubelet, containerd, runc, CNI and kube-proxy, each node in its own network
// namespace), CoreDNS, a volume provisioner, an optional S3 server, and a teardown that leaves nothing
// behind. It is what `gardener-etcd local up`, the demo and the e2e suites run on, on machines without
// Docker.
//
// It needs root (network namespaces, mounts, cgroups), iproute2 and the tools of `make tools`. See
// docs/operations.md, "The local seed".
package localseed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/proc"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/provisioner"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/seednet"
)

// Seed is a running local seed.
type Seed struct {
	opts       Options
	prefix     string
	stateDir   string
	network    *seednet.Network
	cp         *controlPlane
	restConfig *rest.Config
	s3         *S3
	// s3Spec starts the S3 server; kept so that StartS3 can bring it back after StopS3.
	s3Spec proc.Spec
	// componentsMu serialises the outage methods (StopS3, StartS3, StopAPIServer, StartAPIServer), which
	// change cp.components while the seed runs.
	componentsMu sync.Mutex
	nodeNames    []string
	// images are the project's images in the seed's registry (PushProjectImages), by name.
	images map[string]string
	// nodes are the seed's nodes, in start order.
	nodes []*seedNode

	// runCtx is what runs until Stop (informers, controllers); cancel ends it.
	runCtx  context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped bool
}

// Start brings a local seed up: pod network, PKI, control plane, StorageClass, nodes and S3. On error
// everything started so far is torn down again.
func Start(ctx context.Context, opts Options) (*Seed, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the local seed needs root: it creates network and mount namespaces")
	}
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	s := &Seed{opts: opts, prefix: newPrefix(), images: map[string]string{}}
	if err := s.prepareStateDir(); err != nil {
		return nil, err
	}
	log := opts.Log.WithValues("seed", s.prefix)
	if err := s.start(ctx); err != nil {
		log.Error(err, "Start failed, tearing down")
		if stopErr := s.Stop(context.WithoutCancel(ctx)); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("teardown after failed start: %w", stopErr))
		}
		return nil, err
	}
	return s, nil
}

func (s *Seed) start(ctx context.Context) error {
	log := s.opts.Log.WithValues("seed", s.prefix)
	begin := time.Now()
	network, err := seednet.Create(ctx, log, s.prefix)
	if err != nil {
		return err
	}
	s.network = network
	bridgeIP := net.IP(network.Gateway.AsSlice())
	p, err := generatePKI(filepath.Join(s.stateDir, "pki"), net.ParseIP("10.96.0.1"), bridgeIP)
	if err != nil {
		return err
	}
	server := "https://" + net.JoinHostPort(bridgeIP.String(), strconv.Itoa(apiserverPort))
	s.restConfig = restConfig(server, p)
	if err := writeKubeconfig(s.Kubeconfig(), server, p); err != nil {
		return err
	}
	s.cp = &controlPlane{binDir: s.opts.BinDir, stateDir: s.stateDir, pki: p, bridgeIP: bridgeIP,
		kubeconfig: s.Kubeconfig(), server: server}
	if err := s.cp.start(ctx, s.restConfig); err != nil {
		return err
	}
	log.Info("Control plane ready", "duration", time.Since(begin).String(), "server", server)
	if err := InstallVPACRDs(ctx, s.restConfig); err != nil {
		return err
	}
	if s.opts.S3 {
		if err := s.startS3(ctx); err != nil {
			return err
		}
	}
	return s.startNodes(ctx)
}

// nodeName is the name of the seed's i-th node (zone a, b, ...).
func (s *Seed) nodeName(i int) string { return fmt.Sprintf("%s-node-%c", s.prefix, 'a'+i) }

// startInformers starts the seed's shared informers with the volume provisioner of its nodes registered;
// they run until Stop.
func (s *Seed) startInformers(ctx context.Context, client kubernetes.Interface) error {
	log := s.opts.Log.WithValues("seed", s.prefix)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.runCtx, s.cancel = runCtx, cancel
	factory := informers.NewSharedInformerFactory(client, 0)
	prov := &provisioner.Provisioner{Client: client, Dir: volumesDir(s.stateDir), Nodes: map[string]bool{}, Log: log.WithName("provisioner")}
	for i := range s.opts.Nodes {
		prov.Nodes[s.nodeName(i)] = true
	}
	if err := prov.EnsureStorageClass(ctx); err != nil {
		return err
	}
	prov.Register(runCtx, factory)
	factory.Start(runCtx.Done())
	s.wg.Add(1)
	go func() { defer s.wg.Done(); <-runCtx.Done(); factory.Shutdown() }()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer cache for %v did not sync", typ)
		}
	}
	return nil
}

// Kubeconfig is the path of the admin kubeconfig (embedded credentials).
func (s *Seed) Kubeconfig() string { return filepath.Join(s.stateDir, "kubeconfig") }

// RESTConfig is an admin client configuration; callers may modify the copy.
func (s *Seed) RESTConfig() *rest.Config { return rest.CopyConfig(s.restConfig) }

// volumesDir holds the provisioner's volumes (one mounted directory each).
func volumesDir(stateDir string) string { return filepath.Join(stateDir, "volumes") }

// StateDir is the instance's directory (the directories of LogDirs among others).
func (s *Seed) StateDir() string { return s.stateDir }

// Prefix names every network namespace, link and node of the instance.
func (s *Seed) Prefix() string { return s.prefix }

// NodeNames are the names of the nodes, in zone order.
func (s *Seed) NodeNames() []string { return append([]string(nil), s.nodeNames...) }

// S3 describes the S3 server, nil unless Options.S3.
func (s *Seed) S3() *S3 { return s.s3 }

// EnforcesNetworkPolicies tells whether the nodes enforce NetworkPolicies and Gardener's NetworkPolicy
// controllers run (Options.NetworkPolicies).
func (s *Seed) EnforcesNetworkPolicies() bool { return s.opts.NetworkPolicies }

// BridgeIP is the host's address on the pod network, where the apiserver and S3 listen.
func (s *Seed) BridgeIP() string { return s.network.Gateway.String() }

// Stop tears everything down: pods (graceful, short), nodes, S3, control plane, network namespaces,
// links and the state directory. It is idempotent. When something could not be removed the state
// directory stays with its instance record, for Down.
func (s *Seed) Stop(ctx context.Context) error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	var errs []error
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	if err := s.stopNodes(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := provisioner.UnmountAll(volumesDir(s.stateDir)); err != nil {
		errs = append(errs, err)
	}
	if s.cp != nil {
		if err := s.cp.stop(); err != nil {
			errs = append(errs, err)
		}
	}
	// The control plane's processes are gone even when stopping them reported an error (killed after
	// the grace period); namespaces and links may not be.
	if err := seednet.Cleanup(ctx, s.prefix); err != nil {
		// The instance record stays, so that Down can find and remove what is left.
		errs = append(errs, err)
		return fmt.Errorf("stopping the local seed (run Down on %s for the leftovers): %w", s.stateDir, errors.Join(errs...))
	}
	if err := removeStateDir(s.stateDir); err != nil {
		errs = append(errs, fmt.Errorf("removing state dir: %w", err))
	}
	return errors.Join(errs...)
}

// prepareStateDir creates the state directory (which must be new or empty) and records the instance in
// it, so that Down can find the leftovers of a crashed instance.
func (s *Seed) prepareStateDir() error {
	dir := s.opts.StateDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gardener-etcd-localseed-")
		if err != nil {
			return fmt.Errorf("creating state dir: %w", err)
		}
		dir = tmp
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("state dir %s is not empty (run Down on it first if it holds a crashed instance)", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating state dir: %w", err)
	}
	abs, err := resolvedPath(dir)
	if err != nil {
		return err
	}
	if len(abs) > maxStateDirLen {
		return fmt.Errorf("state dir %s is %d characters long; the nodes need at most %d: the kubelets keep unix sockets "+
			"below it, and a socket path has at most 107 characters (choose a shorter --state-dir)", abs, len(abs), maxStateDirLen)
	}
	s.stateDir = abs
	if err := os.MkdirAll(filepath.Join(abs, "logs"), 0o755); err != nil {
		return fmt.Errorf("creating state dir: %w", err)
	}
	start, _ := processStartTime(os.Getpid())
	return writeInstance(abs, instance{Prefix: s.prefix, PID: os.Getpid(), StartTime: start})
}

// newPrefix returns "ls" and 5 random hex digits: short enough for interface names, unique enough for
// concurrent instances, recognisable in `ip link`/`ip netns` output.
func newPrefix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "ls" + hex.EncodeToString(b)[:5]
}
