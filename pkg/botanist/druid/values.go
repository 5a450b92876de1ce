package druid

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/chartrender"
	"github.com/gardener-etcd/gardener-etcd/pkg/imageref"
)

// chartValues are the chart values of the bootstrap: the caller's extras with the images, replicas, the
// webhook certificate and auto-reconcile off set on top — the bootstrap always decides those itself.
func (b *bootstrap) chartValues(caBundle []byte) map[string]any {
	values := deepCopy(b.values.ChartValues)
	if b.values.Image != "" {
		repo, tag, digest := imageref.Split(b.values.Image)
		set(values, repo, "image", "repository")
		if tag != "" {
			set(values, tag, "image", "tag")
		}
		if digest != "" {
			set(values, digest, "image", "digest")
		}
	}
	if b.values.EtcdWrapperImage != "" {
		set(values, b.values.EtcdWrapperImage, "images", "etcdWrapper")
	}
	if b.values.BackupRestoreImage != "" {
		set(values, b.values.BackupRestoreImage, "images", "backupRestore")
	}
	if b.values.Replicas != nil {
		set(values, int64(*b.values.Replicas), "replicas")
	}
	set(values, true, "webhooks", "enabled")
	set(values, string(caBundle), "webhooks", "caBundle")
	set(values, WebhookSecretName, "webhooks", "secretName")
	set(values, false, "controllers", "etcd", "enableEtcdSpecAutoReconcile")
	return values
}

// render renders the druid chart for this seed.
func (b *bootstrap) render(caBundle []byte) ([]*unstructured.Unstructured, error) {
	return chartrender.RenderEmbedded(charts.EtcdDruid, chartrender.Release{Name: Name, Namespace: b.namespace}, b.chartValues(caBundle))
}

// set stores value under the nested keys, creating (or replacing non-map) intermediate tables.
func set(values map[string]any, value any, keys ...string) {
	m := values
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
}

// deepCopy copies nested tables so that set never writes into the caller's ChartValues.
func deepCopy(in map[string]any) map[string]any {
	out := maps.Clone(in)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range out {
		if m, ok := v.(map[string]any); ok {
			out[k] = deepCopy(m)
		}
	}
	return out
}
