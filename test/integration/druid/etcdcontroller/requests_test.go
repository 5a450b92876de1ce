package etcdcontroller_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// requestLog records every request a client sends, as "<METHOD> <path>" (with ?watch=true for watches).
type requestLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) RoundTrip(req *http.Request) (*http.Response, error) {
	line := req.Method + " " + req.URL.Path
	if req.URL.Query().Get("watch") == "true" {
		line += "?watch=true"
	}
	l.mu.Lock()
	l.seen = append(l.seen, line)
	l.mu.Unlock()
	return l.next.RoundTrip(req)
}

// since returns the requests recorded after the first n.
func (l *requestLog) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen[n:]...)
}

func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.seen)
}

// recordedIdentity is the suite's identity with every request of the client going through a requestLog.
func recordedIdentity() (*rest.Config, *requestLog) {
	log := &requestLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { log.next = rt; return log })
	return cfg, log
}

// kindOf turns "GET /api/v1/namespaces/ns/secrets/name" into "GET secrets" (LIST for collections), so
// that requests can be counted by verb and resource.
func kindOf(line string) string {
	method, path, _ := strings.Cut(line, " ")
	segments := strings.Split(strings.Trim(strings.TrimSuffix(path, "?watch=true"), "/"), "/")
	switch {
	case len(segments) >= 3 && segments[0] == "api":
		segments = segments[2:]
	case len(segments) >= 4 && segments[0] == "apis":
		segments = segments[3:]
	default:
		return line
	}
	if len(segments) >= 3 && segments[0] == "namespaces" {
		segments = segments[2:]
	}
	resource := segments[0]
	if len(segments) >= 3 {
		resource += "/" + segments[2]
	}
	switch {
	case strings.HasSuffix(path, "?watch=true"):
		method = "WATCH"
	case method == http.MethodGet && len(segments) == 1:
		method = "LIST"
	}
	return method + " " + resource
}

// A burst of new Etcds with TLS and backup secrets is reconciled without a request that could be saved:
//   - no Secret is read from the apiserver: the secrets gate judges the referenced secrets on druid's
//     cache, which holds digests of them (etcd.CacheOptions);
//   - no StatefulSet is patched: it is created with the annotations the spec and heal flows record on it
//     (the applied spec, the cluster size).
//
// The requests druid sent are logged per Etcd by verb and resource.
func TestBurstOfNewEtcdsSendsNoAvoidableRequest(t *testing.T) {
	g := NewWithT(t)
	const n = 10
	identity, requests := recordedIdentity()
	restartDruidAs(t, identity)

	namespaces := make([]string, n)
	for i := range namespaces {
		ns := env.CreateNamespace(t)
		namespaces[i] = ns
		createSecret(t, ns, "ca-etcd", "bundle.crt")
		createSecret(t, ns, "etcd-server", "tls.crt", "tls.key")
		createSecret(t, ns, "etcd-client", "tls.crt", "tls.key")
		createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	}
	// druid has seen every secret before the Etcds arrive, as it has in a seed where the secrets are
	// written before the Etcd; a secret the cache has not seen yet is read from the apiserver (see the
	// secrets gate).
	g.Eventually(func(g Gomega) {
		for _, ns := range namespaces {
			for _, name := range []string{"ca-etcd", "etcd-server", "etcd-client", "etcd-backup"} {
				g.Expect(druid.cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})).To(Succeed())
			}
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	before := requests.len()
	for _, ns := range namespaces {
		createEtcd(t, ns, 1, withClientTLS, withS3Store)
	}
	for _, ns := range namespaces {
		waitReconciled(t, ns)
		g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(1))))
	}
	sent := requests.since(before)

	counts := map[string]int{}
	var secretReads []string
	for _, line := range sent {
		kind := kindOf(line)
		counts[kind]++
		if kind == "GET secrets" || kind == "LIST secrets" {
			secretReads = append(secretReads, line)
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var table strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&table, "  %-40s %5.2f\n", k, float64(counts[k])/n)
	}
	t.Logf("druid's requests per Etcd (%d Etcds, %d requests):\n%s", n, len(sent), table.String())
	g.Expect(secretReads).To(BeEmpty(), "Secret reads that reached the apiserver")
	g.Expect(counts).NotTo(HaveKey("PATCH statefulsets"), "a new StatefulSet is created with its annotations, not patched right after")
	g.Expect(counts).To(HaveKeyWithValue("POST statefulsets", n))
}
