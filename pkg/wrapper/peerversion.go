package wrapper

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-semver/semver"
	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/embed"
)

// peerVersionTimeout bounds asking one member for its version.
const peerVersionTimeout = 2 * time.Second

// membersBelow returns the other members of the configuration's initial cluster whose etcd answers on its
// peer URL's /version (where etcd members ask each other before they join) with a server version older
// than minimum. Members that do not answer are not counted: nothing is known about them.
func membersBelow(ctx context.Context, cfg *embed.Config, minimum semver.Version) []string {
	var below []string
	for name, v := range peerVersions(ctx, cfg) {
		if v.LessThan(minimum) {
			below = append(below, fmt.Sprintf("%s (%s)", name, v))
		}
	}
	return below
}

// membersAbove is membersBelow for server versions newer than the minor version maximum.
func membersAbove(ctx context.Context, cfg *embed.Config, maximum semver.Version) []string {
	var above []string
	for name, v := range peerVersions(ctx, cfg) {
		if maximum.LessThan(semver.Version{Major: v.Major, Minor: v.Minor}) {
			above = append(above, fmt.Sprintf("%s (%s)", name, v))
		}
	}
	return above
}

// peerVersions are the server versions of the other members of the initial cluster that answer. They are
// asked at the same time: a member that does not answer (not started yet, or a name that does not resolve
// yet, as a scale-up's new members) costs up to peerVersionTimeout, and this way only once.
func peerVersions(ctx context.Context, cfg *embed.Config) map[string]*semver.Version {
	urls, err := types.NewURLsMap(cfg.InitialCluster)
	if err != nil || len(urls) < 2 {
		return nil
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil // the peers are reached directly, as etcd reaches them
	// HTTP/1.1 only: etcd's peer port offers HTTP/2 in the TLS handshake but answers HTTP/1.1, so a client
	// that takes the offer fails on every answer.
	transport.ForceAttemptHTTP2 = false
	transport.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	if !cfg.PeerTLSInfo.Empty() {
		if transport.TLSClientConfig, err = cfg.PeerTLSInfo.ClientConfig(); err != nil {
			return nil
		}
	}
	client := &http.Client{Transport: transport, Timeout: peerVersionTimeout}
	defer transport.CloseIdleConnections()
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		versions = map[string]*semver.Version{}
	)
	for name, peers := range urls {
		if name == cfg.Name || len(peers) == 0 {
			continue
		}
		wg.Go(func() {
			if v, err := peerVersion(ctx, client, peers[0].String()); err == nil {
				mu.Lock()
				versions[name] = v
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return versions
}

// peerVersion is GET <peer URL>/version's etcdserver.
func peerVersion(ctx context.Context, client *http.Client, peerURL string) (*semver.Version, error) {
	v, err := versionsOf(ctx, client, peerURL)
	if err != nil {
		return nil, err
	}
	return semver.NewVersion(v.Server)
}

// etcdVersions is what etcd's /version answers, on its client and its peer URLs.
type etcdVersions struct {
	Server  string `json:"etcdserver"`
	Cluster string `json:"etcdcluster"`
}

// versionsOf is GET <base URL>/version.
func versionsOf(ctx context.Context, client *http.Client, baseURL string) (etcdVersions, error) {
	var v etcdVersions
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(baseURL, "/")+"/version", nil)
	if err != nil {
		return v, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return v, err
	}
	if resp.StatusCode != http.StatusOK {
		return v, fmt.Errorf("%s/version: %s", baseURL, resp.Status)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return v, fmt.Errorf("%s/version: %w", baseURL, err)
	}
	return v, nil
}
