package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/defrag"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/heartbeat"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/leader"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/netmetrics"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Run serves until ctx ends. It fails fast when the template does not describe this pod or the store
// cannot be opened, so that a misconfiguration shows in the container status instead of in every request.
func Run(ctx context.Context, o Options, log logr.Logger) error {
	if err := o.Validate(); err != nil {
		return err
	}
	pod, namespace, templatePath := o.identity()
	served := newServedConfig(templatePath, pod)
	cfg, err := served.resolve()
	if err != nil {
		return fmt.Errorf("resolving this member's etcd configuration: %w", err)
	}
	log.Info("Resolved member", "member", cfg.Member.Name, "pod", pod, "peerURLs", cfg.Member.PeerURLs, "storageProvider", o.Store.Provider)

	clientTLS, err := o.clientTLS()
	if err != nil {
		return err
	}
	cli, err := o.etcdClient(clientTLS)
	if err != nil {
		return err
	}
	defer cli.Close()
	endpoint := o.localEndpoint()

	var store snapstore.SnapStore
	var watchCli *clientv3.Client
	if o.hasStore() {
		// Watched: a rotated backup secret reopens the store in place, without restarting the pod.
		if store, err = snapstore.OpenWatched(ctx, o.Store, snapstore.WatchOptions{}, log.WithName("snapstore")); err != nil {
			return fmt.Errorf("opening the store %s %s/%s: %w", o.Store.Provider, o.Store.Container, o.Store.Prefix, err)
		}
		defer store.Close()
		if watchCli, err = o.deltaWatchClient(clientTLS); err != nil {
			return err
		}
		defer watchCli.Close()
	}
	var restoreSource *initializer.RestoreSource
	if o.RestoreSource.Prefix != "" {
		// Read only, and not watched: it is read at most once, by a new cluster's first initializations.
		src, err := snapstore.New(ctx, o.restoreSourceConfig(), log.WithName("restore-source"))
		if err != nil {
			return fmt.Errorf("opening the restore source %s %s/%s: %w", o.Store.Provider, o.Store.Container, o.RestoreSource.Prefix, err)
		}
		defer src.Close()
		restoreSource = &initializer.RestoreSource{Store: snapstore.ReadOnly(src), TargetRevision: o.RestoreSource.Revision, TargetTime: o.RestoreSource.time}
		log.Info("Restore source configured: a new cluster restores from it while its own prefix holds no backup",
			"prefix", o.RestoreSource.Prefix, "revision", o.RestoreSource.Revision, "time", o.RestoreSource.Time)
	}
	var kube kubernetes.Interface
	if o.EnableMemberLeaseRenewal || (o.EnableSnapshotLeaseRenewal && store != nil) {
		if kube, err = o.kubernetesClient(); err != nil {
			return err
		}
	}

	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), netmetrics.Collector{})
	memberMetrics := member.NewMetrics(registry)
	bl := &backupLeader{opts: &o, cli: cli, watchCli: watchCli, endpoint: endpoint, clientTLS: clientTLS, templatePath: served.templatePath,
		store: store, leases: snapshotter.NoLeases{}, metrics: snapshotter.NewMetrics(registry), defragMetrics: defrag.NewMetrics(registry),
		noSpaceReport: &defrag.Report{}, memberMetrics: memberMetrics, log: log.WithName("backup-leader"), stopping: ctx.Done()}
	if o.EnableMemberLeaseRenewal {
		bl.memberLeases = heartbeat.LeftClusterMarks{Kubernetes: kube, Namespace: namespace}
	}
	if o.EnableSnapshotLeaseRenewal && store != nil {
		bl.leases = &snapshotlease.Kubernetes{Client: kube, Namespace: namespace, FullName: o.FullSnapshotLeaseName, DeltaName: o.DeltaSnapshotLeaseName}
	}
	elector, err := leader.New(leader.Options{Client: cli, Endpoint: endpoint, ReelectionPeriod: o.ReelectionPeriod, Timeout: o.LeaderElectionTimeout,
		Callbacks: leader.Callbacks{OnStartedLeading: bl.lead}, Log: log})
	if err != nil {
		return err
	}

	wrapperURL, err := o.wrapperURL()
	if err != nil {
		return err
	}
	initer := &decisionInitializer{served: served, dataDir: o.DataDir, owner: ownerOf(namespace, pod), serviceEndpoints: o.ServiceEndpoints,
		clientTLS: clientTLS, store: store, restoreSource: restoreSource, metrics: initializer.NewMetrics(registry), log: log}
	if o.EnableMemberLeaseRenewal {
		initer.livePeers = heartbeat.PeerLiveness{Kubernetes: kube, Namespace: namespace, Heartbeat: o.HeartbeatDuration}.LivePeers
		initer.leftCluster = heartbeat.LeftClusterMarks{Kubernetes: kube, Namespace: namespace}.LeftCluster
		records := heartbeat.ClusterIDRecords{Kubernetes: kube, Namespace: namespace}
		initer.clusterIDs, initer.joinedExisting = records.ClusterIDs, records.JoinedExistingCluster
	}
	apiOpts := httpapi.Options{Initializer: initer, Config: served.Serve, Health: memberHealth(cli, endpoint, bl.metrics.UploadsFailingSince, backupFailurePeriods*o.DeltaSnapshotPeriod), Gatherer: registry,
		InitializationGuard: initializationGuard(o.DataDir, wrapperURL), ClientCAFile: o.ServerCACert, EnableProfiling: o.EnableProfiling,
		Log: log.WithName("http")}
	if store != nil {
		initer.fullSnapshot = initializer.FullSnapshotWith(o.snapshotterConfig(), store, log)
		apiOpts.Snapshotter = &leaderSnapshots{leader: bl, store: store}
		apiOpts.Leader = electedLeader{elector: elector, sidecarURL: o.sidecarURL()}
		if apiOpts.ForwardClient, err = o.forwardClient(); err != nil {
			return err
		}
	}
	api := httpapi.New(ctx, apiOpts)
	l, err := net.Listen("tcp", ":"+strconv.Itoa(o.ServerPort))
	if err != nil {
		return fmt.Errorf("HTTP API port: %w", err)
	}

	sw := &member.PeerURLSwitch{Client: cli, LocalEndpoint: endpoint, Restarter: member.WrapperRestarter{URL: wrapperURL}, Log: log.WithName("member")}
	done := make(chan struct{})
	defer func() { <-done }() // the elector ends its term (the snapshotter) before the store closes
	go func() { defer close(done); elector.Run(ctx) }()
	var ran func(context.Context, []string) ([]string, error)
	if o.EnableMemberLeaseRenewal {
		ran = heartbeat.PeerLiveness{Kubernetes: kube, Namespace: namespace}.Renewed
	}
	clusterCli, err := o.clusterClient(served.templatePath, cfg.Member.ClientURLs, clientTLS, ran)
	if err != nil {
		return err
	}
	defer clusterCli.Close()
	var reportMembership func(context.Context) error
	if o.EnableMemberLeaseRenewal {
		lease := &heartbeat.MemberLease{Kubernetes: kube, Namespace: namespace, Name: cfg.Member.Name, Etcd: cli, LocalEndpoint: endpoint,
			MovedAside:           func() []string { return initializer.MovedAside(o.DataDir) },
			NoSpaceCannotRecover: bl.noSpaceReport.OverQuota,
			NoLeader:             &heartbeat.NoLeaderWatch{MemberData: heartbeat.HasMemberData(o.DataDir), Peers: clusterCli},
			Log:                  log.WithName("heartbeat").WithValues("member", cfg.Member.Name)}
		reportMembership = lease.Renew
		go heartbeat.Run(ctx, o.HeartbeatDuration, lease.Renew, log.WithName("heartbeat"))
	}
	go membershipLoop(ctx, served, cli, clusterCli, endpoint, sw, memberMetrics, reportMembership, membershipPollInterval, log.WithName("member"))
	go observeMembership(ctx, cli, clusterCli, endpoint, memberMetrics, membershipMetricsPeriod, log.WithName("member"))

	log.Info("Serving the sidecar API", "port", o.ServerPort, "tls", o.ServerCert != "")
	return api.Serve(ctx, l, o.ServerCert, o.ServerKey)
}

// identity is the pod, its namespace and the template path, from Options or the environment.
func (o *Options) identity() (pod, namespace, templatePath string) {
	pod, namespace, templatePath = o.Pod, o.Namespace, o.TemplatePath
	if pod == "" {
		pod = os.Getenv(etcdpod.EnvPodName)
	}
	if namespace == "" {
		namespace = os.Getenv(etcdpod.EnvPodNamespace)
	}
	if templatePath == "" {
		templatePath = memberconfig.TemplatePath()
	}
	return pod, namespace, templatePath
}

// sidecarURL is where a follower finds the backup leader's sidecar.
func (o *Options) sidecarURL() func(string) (string, error) {
	if o.SidecarURLOf != nil {
		return o.SidecarURLOf
	}
	scheme := "http"
	if o.ServerCert != "" {
		scheme = "https"
	}
	return sameHostSidecar(scheme, o.ServerPort)
}

// kubernetesClient is Options.Kubernetes, else the pod's service account, else $KUBECONFIG when run
// outside a cluster.
func (o *Options) kubernetesClient() (kubernetes.Interface, error) {
	if o.Kubernetes != nil {
		return o.Kubernetes, nil
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("creating the Kubernetes client for lease renewal: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}
