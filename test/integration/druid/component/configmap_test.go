package component_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
)

func TestConfigMapTemplateForReplicasAndTLS(t *testing.T) {
	for _, c := range []struct {
		replicas int32
		tls      bool
	}{{1, false}, {1, true}, {3, false}, {3, true}} {
		t.Run(fmt.Sprintf("replicas=%d,tls=%t", c.replicas, c.tls), func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns := env.CreateNamespace(t)
			var customize []func(*druidv1alpha1.Etcd)
			if c.tls {
				customize = append(customize, withPeerTLS, withClientTLS)
			}
			etcd := createEtcd(t, ns, c.replicas, customize...)
			registry, _ := newRegistry(t)
			g.Expect(registry.Get(component.KindConfigMap).Sync(ctx, etcd)).To(Succeed())

			cm := get(t, ns, "etcd-main-config", &corev1.ConfigMap{}).(*corev1.ConfigMap)
			var cfg map[string]any
			g.Expect(yaml.Unmarshal([]byte(cm.Data["etcd.conf.yaml"]), &cfg)).To(Succeed())

			scheme := map[bool]string{false: "http", true: "https"}[c.tls]
			var members []string
			peerURLs, clientURLs := map[string]any{}, map[string]any{}
			for i := 0; i < int(c.replicas); i++ {
				host := fmt.Sprintf("etcd-main-%d.etcd-main-peer.%s.svc", i, ns)
				members = append(members, fmt.Sprintf("etcd-main-%d=%s://%s:2380", i, scheme, host))
				peerURLs[fmt.Sprintf("etcd-main-%d", i)] = []any{fmt.Sprintf("%s://%s:2380", scheme, host)}
				clientURLs[fmt.Sprintf("etcd-main-%d", i)] = []any{fmt.Sprintf("%s://%s:2379", scheme, host)}
			}
			g.Expect(cfg).To(HaveKeyWithValue("initial-cluster", strings.Join(members, ",")))
			g.Expect(cfg).To(HaveKeyWithValue("initial-advertise-peer-urls", peerURLs))
			g.Expect(cfg).To(HaveKeyWithValue("advertise-client-urls", clientURLs))
			g.Expect(cfg).To(HaveKeyWithValue("listen-peer-urls", scheme+"://0.0.0.0:2380"))
			g.Expect(cfg).To(HaveKeyWithValue("listen-client-urls", scheme+"://0.0.0.0:2379"))
			g.Expect(cfg).To(HaveKeyWithValue("initial-cluster-state", "new"))
			g.Expect(cfg).To(HaveKeyWithValue("data-dir", "/var/etcd/data/new.etcd"))
			g.Expect(cfg).To(HaveKeyWithValue("quota-backend-bytes", float64(8*1024*1024*1024)))
			g.Expect(cfg).To(HaveKeyWithValue("snapshot-count", float64(10000)))
			g.Expect(cfg).To(HaveKeyWithValue("auto-compaction-mode", "periodic"))
			g.Expect(cfg).To(HaveKeyWithValue("auto-compaction-retention", "30m"))
			if c.tls {
				g.Expect(cfg).To(HaveKeyWithValue("client-transport-security", HaveKeyWithValue("trusted-ca-file", "/var/etcd/ssl/ca/bundle.crt")))
				g.Expect(cfg).To(HaveKeyWithValue("client-transport-security", HaveKeyWithValue("cert-file", "/var/etcd/ssl/server/tls.crt")))
				g.Expect(cfg).To(HaveKeyWithValue("peer-transport-security", HaveKeyWithValue("trusted-ca-file", "/var/etcd/ssl/peer/ca/bundle.crt")))
				g.Expect(cfg).To(HaveKeyWithValue("peer-transport-security", HaveKeyWithValue("key-file", "/var/etcd/ssl/peer/server/tls.key")))
			} else {
				g.Expect(cfg).NotTo(HaveKey("client-transport-security"))
				g.Expect(cfg).NotTo(HaveKey("peer-transport-security"))
			}

			// The StatefulSet's checksum annotation is the checksum of exactly this data.
			g.Expect(registry.Get(component.KindStatefulSet).Sync(ctx, etcd)).To(Succeed())
			sts := get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet)
			g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue("checksum/etcd-configmap", configmap.Checksum(cm.Data)))
		})
	}
}
