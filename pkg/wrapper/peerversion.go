package wrapper

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-semver/semver"
	"go.etcd.io/etcd/client/pkg/v3/types"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
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
// yet, as a scale-up's new members) costs up to peerVersionTimeout, and this way only once. A member with
// data asks only the members its data's membership knows (askedPeers).
func peerVersions(ctx context.Context, cfg *embed.Config) map[string]*semver.Version {
	urls, err := types.NewURLsMap(cfg.InitialCluster)
	if err != nil || len(urls) < 2 {
		return nil
	}
	urls = askedPeers(cfg, urls)
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

// askedPeers narrows the initial cluster of a member with data (a WAL) to the members its data's
// membership knows (etcddata.KnownPeerURLs): etcd ignores the initial cluster of such a member and talks
// to those only. The initial cluster of a member restarted during a scale-up names the new members too,
// whose pods do not exist yet; asking for them makes the seed's DNS answer that their names do not exist,
// which it caches (up to its TTL, 30 s on Gardener's seeds) and keeps answering after their pods started,
// so that nobody reaches the new members meanwhile. Without data, or when the membership does not read,
// the whole initial cluster is asked.
func askedPeers(cfg *embed.Config, urls types.URLsMap) types.URLsMap {
	if !hasWAL(cfg.Dir) {
		return urls
	}
	known, ok, err := etcddata.KnownPeerURLs(cfg.Dir)
	if err != nil || !ok {
		return urls
	}
	// By host and port: a peer URL may have changed its scheme since (peer TLS switched on), not those.
	var hosts []string
	for _, k := range known {
		if u, err := url.Parse(k); err == nil {
			hosts = append(hosts, u.Host)
		}
	}
	asked := types.URLsMap{}
	for name, peers := range urls {
		if slices.ContainsFunc(peers, func(u url.URL) bool { return slices.Contains(hosts, u.Host) }) {
			asked[name] = peers
		}
	}
	return asked
}
