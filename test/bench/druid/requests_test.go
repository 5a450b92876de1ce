package druid

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
)

// requestKey is how the apiserver's apiserver_request_total tells requests apart, as far as this
// benchmark cares: the verb (GET, LIST, WATCH, POST, PATCH, PUT, DELETE, …) and the resource with its
// subresource ("etcds/status").
type requestKey struct{ verb, resource string }

func (k requestKey) String() string { return k.verb + " " + k.resource }

// requestCounts are requests per key, and how many of them were answered 404.
type requestCounts struct {
	total    map[requestKey]float64
	notFound map[requestKey]float64
}

func newRequestCounts() requestCounts {
	return requestCounts{total: map[requestKey]float64{}, notFound: map[requestKey]float64{}}
}

// apiserverRequests sums the apiserver's apiserver_request_total by verb and resource.
func apiserverRequests(families map[string]*dto.MetricFamily) requestCounts {
	c := newRequestCounts()
	family := families["apiserver_request_total"]
	if family == nil {
		return c
	}
	for _, m := range family.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["resource"] == "" {
			continue // /healthz, /metrics, discovery
		}
		resource := labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			resource += "/" + sub
		}
		key := requestKey{verb: labels["verb"], resource: resource}
		c.total[key] += m.GetCounter().GetValue()
		if labels["code"] == "404" {
			c.notFound[key] += m.GetCounter().GetValue()
		}
	}
	return c
}

// minus is c − o per key (what happened between two snapshots, or what is left after taking out the
// benchmark's own requests).
func (c requestCounts) minus(o requestCounts) requestCounts {
	d := newRequestCounts()
	for k, v := range c.total {
		if v -= o.total[k]; v > 0 {
			d.total[k] = v
		}
	}
	for k, v := range c.notFound {
		if v -= o.notFound[k]; v > 0 {
			d.notFound[k] = v
		}
	}
	return d
}

func (c requestCounts) sum() (total, notFound float64) {
	for _, v := range c.total {
		total += v
	}
	for _, v := range c.notFound {
		notFound += v
	}
	return total, notFound
}

// perVerb sums the counts by verb.
func (c requestCounts) perVerb() map[string]float64 {
	out := map[string]float64{}
	for k, v := range c.total {
		out[k.verb] += v
	}
	return out
}

// lines formats the counts divided by n, largest first.
func (c requestCounts) lines(n int) []string {
	keys := make([]requestKey, 0, len(c.total))
	for k := range c.total {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c.total[keys[i]] != c.total[keys[j]] {
			return c.total[keys[i]] > c.total[keys[j]]
		}
		return keys[i].String() < keys[j].String()
	})
	var out []string
	for _, k := range keys {
		line := fmt.Sprintf("%-40s %7.2f", k, c.total[k]/float64(n))
		if nf := c.notFound[k]; nf > 0 {
			line += fmt.Sprintf("  (404: %.2f)", nf/float64(n))
		}
		out = append(out, line)
	}
	return out
}

// countingTransport counts the benchmark's own requests the way the apiserver does, so that they can be
// taken out of apiserver_request_total and what remains is druid's (and the apiserver's own few).
type countingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen requestCounts
}

func newCountingTransport(next http.RoundTripper) *countingTransport {
	return &countingTransport{next: next, seen: newRequestCounts()}
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if key, ok := keyOf(req); ok {
		t.mu.Lock()
		t.seen.total[key]++
		if err == nil && resp.StatusCode == http.StatusNotFound {
			t.seen.notFound[key]++
		}
		t.mu.Unlock()
	}
	return resp, err
}

func (t *countingTransport) snapshot() requestCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return newRequestCounts().plus(t.seen)
}

// plus adds o's counts to c and returns c.
func (c requestCounts) plus(o requestCounts) requestCounts {
	for k, v := range o.total {
		c.total[k] += v
	}
	for k, v := range o.notFound {
		c.notFound[k] += v
	}
	return c
}

// keyOf derives the apiserver's verb and resource from a resource request's URL:
// /api/v1/namespaces/<ns>/<resource>[/<name>[/<subresource>]] or /apis/<group>/<version>/…
func keyOf(req *http.Request) (requestKey, bool) {
	segments := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(segments) >= 3 && segments[0] == "api":
		rest = segments[2:]
	case len(segments) >= 4 && segments[0] == "apis":
		rest = segments[3:]
	default:
		return requestKey{}, false
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	resource, named := rest[0], len(rest) >= 2
	if len(rest) >= 3 {
		resource += "/" + rest[2]
	}
	verb := req.Method
	switch {
	case req.Method == http.MethodGet && req.URL.Query().Get("watch") == "true":
		verb = "WATCH"
	case req.Method == http.MethodGet && !named:
		verb = "LIST"
	case req.Method == http.MethodDelete && !named:
		verb = "DELETECOLLECTION"
	}
	return requestKey{verb: verb, resource: resource}, true
}
