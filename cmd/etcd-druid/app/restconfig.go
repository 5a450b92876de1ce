package app

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Defaults of druid's client-side rate limit towards the apiserver. client-go's own default (5 QPS, burst
// 10) would make a burst of new Etcds wait minutes for the client instead of the apiserver: a burst of 500
// sends about 10,000 requests. 500 QPS lets that leave within about 20 s on an apiserver that keeps up,
// while a controller stuck in a loop still cannot take more than that from the apiserver's capacity (API
// Priority and Fairness guards the rest).
const (
	DefaultClientQPS   float32 = 500
	DefaultClientBurst int     = 1000
)

// ClientConnection is the rate limit of druid's requests to the apiserver, whatever way the kubeconfig
// was found (--kubeconfig, $KUBECONFIG, in-cluster).
type ClientConnection struct {
	// QPS is the sustained rate; a negative value switches the client-side limit off.
	QPS float32
	// Burst is how many requests may go out at once above QPS.
	Burst int
}

// Validate rejects a zero QPS (client-go would silently replace it by 5) and a burst that would block
// every request.
func (c ClientConnection) Validate() error {
	var errs []error
	if c.QPS == 0 {
		errs = append(errs, errors.New("clientConnection.qps must be positive, or negative to switch the client-side limit off; got 0"))
	}
	if c.QPS > 0 && c.Burst < 1 {
		errs = append(errs, fmt.Errorf("clientConnection.burst must be at least 1 when qps is positive, got %d", c.Burst))
	}
	return errors.Join(errs...)
}

// restConfigFor is the one way druid builds its client configuration: the kubeconfig at cfg.Kubeconfig,
// or else $KUBECONFIG / in-cluster / ~/.kube/config as controller-runtime finds them, with cfg's client
// settings applied on top, so that the way the kubeconfig is found never changes how druid talks to the
// apiserver.
//
// Responses come uncompressed: kube-apiserver from 1.37 on (WatchListCompression) gzips each flush of a
// WatchList stream, the way druid's informers watch, for a client that accepts gzip, so every event they
// receive (a few hundred bytes, each compressed on its own) would cost the apiserver CPU, and druid CPU to
// inflate it, to save bytes on the network between druid and the seed's apiserver.
func restConfigFor(cfg Config) (*rest.Config, error) {
	rc, err := loadKubeconfig(cfg.Kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.QPS = cfg.ClientConnection.QPS
	rc.Burst = cfg.ClientConnection.Burst
	// See above. client-go honours it on every transport of its own: any kubeconfig with a CA, a client
	// certificate or an exec plugin, and in-cluster.
	rc.DisableCompression = true
	return rc, nil
}

func loadKubeconfig(path string) (*rest.Config, error) {
	if path == "" {
		rc, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("loading the kubeconfig ($KUBECONFIG, in-cluster or ~/.kube/config): %w", err)
		}
		return rc, nil
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	return rc, nil
}
