// Command kube-network-policies runs upstream's NetworkPolicy enforcement (sigs.k8s.io/kube-network-policies)
// on one node of the local seed. Upstream's own command only knows the in-cluster configuration of a
// DaemonSet pod (a service-account token at a fixed host path); the seed's nodes are processes in network
// namespaces, so this one takes a kubeconfig instead and runs the same controller, which reads the first
// packet of each connection from an NFQUEUE and accepts or drops it by the NetworkPolicies. The rules that
// queue the packets are this command's own (queue.go): upstream's need a kernel feature many kernels lack.
//
// It stops on SIGTERM as well as SIGINT, removes its queueing rules first and waits for the controller to
// stop, so that a stopped node keeps no rule that would queue packets to nobody.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/api"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

// cleanupTimeout bounds the wait for the controller to remove its rules after a stop signal.
const cleanupTimeout = 10 * time.Second

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kube-network-policies:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the agent (reads pods, namespaces and network policies)")
	nodeName := flag.String("hostname-override", "", "name of the Node whose pods this agent enforces policies for")
	queueID := flag.Int("nfqueue-id", 100, "number of the NFQUEUE the rules send packets to")
	failOpen := flag.Bool("fail-open", false, "accept packets while the agent is not running (default: drop them)")
	metricsAddress := flag.String("metrics-bind-address", "", "host:port of the Prometheus metrics (default: off)")
	podCIDRFlag := flag.String("pod-cidr", "", "the node's pod range: new connections from or to it are judged")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" || *nodeName == "" {
		return errors.New("--kubeconfig and --hostname-override are required")
	}
	podCIDR, err := netip.ParsePrefix(*podCIDRFlag)
	if err != nil {
		return fmt.Errorf("--pod-cidr: %w", err)
	}
	if *queueID < 0 || *queueID > 65535 {
		return fmt.Errorf("--nfqueue-id %d: must be between 0 and 65535", *queueID)
	}
	// The NRI plugin of upstream's controller connects to the host-wide default socket: a runtime serving
	// it there is not this node's containerd (the seed's run without NRI), and its pods are not this node's.
	if _, err := os.Stat(api.DefaultSocketPath); err == nil {
		return fmt.Errorf("a container runtime serves NRI at %s: this agent would take its pods for the node's", api.DefaultSocketPath)
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	config.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()

	if *metricsAddress != "" {
		http.Handle("/metrics", promhttp.Handler())
		server := &http.Server{Addr: *metricsAddress, ReadHeaderTimeout: 10 * time.Second}
		go func() { klog.ErrorS(server.ListenAndServe(), "metrics server stopped") }()
	}

	factory := informers.NewSharedInformerFactory(client, 0)
	controller, err := networkpolicy.NewController(client,
		factory.Networking().V1().NetworkPolicies(), factory.Core().V1().Namespaces(), factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			QueueID:  *queueID,
			FailOpen: *failOpen,
			NodeName: *nodeName,
			// Upstream's controller dereferences its NRI plugin for every address it does not know as a
			// pod's (the apiserver's, the host's), so NRI stays on; with no runtime serving NRI (checked
			// above) the plugin only fails to connect and the pod addresses come from the apiserver.
			NRIdisabled: false,
			// Upstream's DNS work-around queues DNS with the native queue expression too; the conntrack race
			// it avoids is fixed in Linux 6.12.
			NetfilterBug1766Fix: false,
		})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- controller.Run(ctx) }()
	factory.Start(ctx.Done())
	// Queue only once the controller knows the policies: until its queue is read, queued packets are dropped.
	for informer, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("cache of %v not synced", informer)
		}
	}
	if err := installQueueRules(podCIDR, uint16(*queueID), *failOpen); err != nil {
		return err
	}
	klog.InfoS("Queueing new connections of the pod range", "podCIDR", podCIDR, "queue", *queueID, "table", queueTable)
	defer func() {
		if err := removeQueueRules(); err != nil {
			klog.ErrorS(err, "removing the queueing rules", "table", queueTable)
		}
	}()

	select {
	case err := <-done: // the controller could not start (no nftables, no NFQUEUE)
		if ctx.Err() == nil {
			return fmt.Errorf("controller stopped: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	if err := removeQueueRules(); err != nil {
		return fmt.Errorf("removing the queueing rules: %w", err)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(cleanupTimeout):
		return fmt.Errorf("controller did not remove its rules within %s", cleanupTimeout)
	}
}
