package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/heartbeat"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
)

// Environment variables the StatefulSet sets through the downward API.
const (
	EnvPodName      = "POD_NAME"
	EnvPodNamespace = "POD_NAMESPACE"
)

// Run serves until ctx ends. It fails fast when the template does not describe this pod, so that a
// misconfiguration shows in the container status instead of in every request.
func Run(ctx context.Context, o Options, log logr.Logger) error {
	if err := o.Validate(); err != nil {
		return err
	}
	pod, namespace := os.Getenv(EnvPodName), os.Getenv(EnvPodNamespace)
	served := newServedConfig(memberconfig.TemplatePath(), pod)
	cfg, err := served.resolve()
	if err != nil {
		return fmt.Errorf("resolving this member's etcd configuration: %w", err)
	}
	log.Info("Resolved member", "member", cfg.Member.Name, "pod", pod, "peerURLs", cfg.Member.PeerURLs, "storageProvider", o.StorageProvider)

	cli, err := o.etcdClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	endpoint := o.Endpoints[0]

	api := httpapi.New(ctx, httpapi.Options{
		Initializer: httpapi.DataDirOnlyInitializer{DataDir: o.DataDir},
		Config:      served.Serve,
		Health:      etcdHealthy(cli, endpoint),
		Log:         log.WithName("http"),
	})
	l, err := net.Listen("tcp", ":"+strconv.Itoa(o.ServerPort))
	if err != nil {
		return fmt.Errorf("HTTP API port: %w", err)
	}

	wrapperURL, err := o.wrapperURL()
	if err != nil {
		return err
	}
	sw := &member.PeerURLSwitch{Client: cli, LocalEndpoint: endpoint, Restarter: member.WrapperRestarter{URL: wrapperURL}, Log: log.WithName("member")}
	go membershipLoop(ctx, served, cli, endpoint, sw, time.Second, log.WithName("member"))

	if o.EnableMemberLeaseRenewal {
		kube, err := kubernetesClient()
		if err != nil {
			return err
		}
		lease := &heartbeat.MemberLease{Kubernetes: kube, Namespace: namespace, Name: cfg.Member.Name, Etcd: cli, LocalEndpoint: endpoint, Log: log.WithName("heartbeat").WithValues("member", cfg.Member.Name)}
		go heartbeat.Run(ctx, o.HeartbeatDuration, lease.Renew, log.WithName("heartbeat"))
	}
	if o.EnableSnapshotLeaseRenewal {
		log.Info("Snapshot leases are renewed by the snapshotter, which this sidecar does not run yet",
			"fullSnapshotLease", o.FullSnapshotLeaseName, "deltaSnapshotLease", o.DeltaSnapshotLeaseName)
	}

	log.Info("Serving the sidecar API", "port", o.ServerPort, "tls", o.ServerCert != "")
	return api.Serve(ctx, l, o.ServerCert, o.ServerKey)
}

// kubernetesClient uses the pod's service account, or $KUBECONFIG when run outside a cluster.
func kubernetesClient() (kubernetes.Interface, error) {
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("Kubernetes client for lease renewal: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}
