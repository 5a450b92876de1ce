package druid_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhookcert"
)

// caWatch checks, after every write a Deploy makes, what the apiserver would see at that moment: every
// serving certificate the webhook Secret held so far and that is still valid (a druid pod may still serve
// it: the kubelet refreshes mounted secrets a minute or so later) must verify against the caBundle of every
// webhook of both configurations. A write order or a bundle that leaves a gap fails the test at the write
// that opened it.
type caWatch struct {
	t       *testing.T
	ns      string
	now     func() time.Time
	mu      sync.Mutex
	served  [][]byte // PEM serving certificates, in the order the Secret held them
	bundles []string // the distinct caBundles seen, in order
}

func (w *caWatch) check(ctx context.Context, c client.Client) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: druid.WebhookSecretName}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return
		}
		w.t.Fatal(err)
	}
	if cert := secret.Data[webhookcert.DataKeyCertificate]; len(w.served) == 0 || string(w.served[len(w.served)-1]) != string(cert) {
		w.served = append(w.served, cert)
	}
	for _, name := range []string{etcdvalidation.ConfigurationName, protection.ConfigurationName} {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, vwc); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			w.t.Fatal(err)
		}
		for _, hook := range vwc.Webhooks {
			bundle := hook.ClientConfig.CABundle
			if len(w.bundles) == 0 || w.bundles[len(w.bundles)-1] != string(bundle) {
				w.bundles = append(w.bundles, string(bundle))
			}
			if hook.ClientConfig.Service == nil || hook.ClientConfig.Service.Namespace != w.ns {
				continue // still the configuration of another test's druid
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(bundle)
			for i, served := range w.served {
				block, _ := pem.Decode(served)
				if block == nil {
					continue
				}
				leaf, err := x509.ParseCertificate(block.Bytes)
				if err != nil {
					w.t.Fatal(err)
				}
				now := w.now()
				if now.After(leaf.NotAfter) {
					continue
				}
				if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, DNSName: druid.Name + "." + w.ns + ".svc"}); err != nil {
					w.t.Errorf("at %s: serving certificate %d (of %d) does not verify against the caBundle of %s/%s: %v",
						now.Format(time.RFC3339), i+1, len(w.served), name, hook.Name, err)
				}
			}
		}
	}
}

// interceptingClient is env.Client with w.check after every write.
func (w *caWatch) interceptingClient(t *testing.T) client.Client {
	t.Helper()
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	after := func(ctx context.Context, c client.WithWatch, err error) error {
		if err == nil {
			w.check(ctx, c)
		}
		return err
	}
	return interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return after(ctx, c, c.Create(ctx, obj, opts...))
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return after(ctx, c, c.Update(ctx, obj, opts...))
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return after(ctx, c, c.Patch(ctx, obj, patch, opts...))
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return after(ctx, c, c.Apply(ctx, obj, opts...))
		},
	})
}

func caCount(bundle string) int {
	n := 0
	for rest := []byte(bundle); ; n++ {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return n
		}
	}
}

// The webhook CA is renewed with an overlap: a renewal publishes the old and the new CA in every caBundle
// before the Secret serves a certificate of the new CA, keeps the old CA there while a pod may still serve
// the old certificate, and drops it once it has expired. At no write of the sequence does a serving
// certificate stand without its CA in the caBundle.
func TestWebhookCARenewalOverlaps(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const ns = "druid-ca-renewal"
	start := time.Now()
	var clock time.Time
	w := &caWatch{t: t, ns: ns, now: func() time.Time { return clock }}
	c := w.interceptingClient(t)
	deployAt := func(at time.Time) {
		t.Helper()
		clock = at
		component := druid.New(c, ns, druid.Values{Image: "registry.example:5000/etcd-druid:v1", Clock: func() time.Time { return clock }})
		g.Expect(component.Deploy(ctx)).To(Succeed())
	}

	deployAt(start)
	g.Expect(w.served).To(HaveLen(1))
	g.Expect(caCount(w.bundles[len(w.bundles)-1])).To(Equal(1))

	// Within CertificateRenewBefore of the expiry: renewed, both CAs published.
	expiry := start.Add(webhookcert.DefaultValidity)
	deployAt(expiry.Add(-druid.CertificateRenewBefore / 2))
	g.Expect(w.served).To(HaveLen(2), "renewed")
	g.Expect(caCount(w.bundles[len(w.bundles)-1])).To(Equal(2), "old and new CA")

	// A later Deploy while the old CA is valid keeps both.
	deployAt(expiry.Add(-time.Hour))
	g.Expect(w.served).To(HaveLen(2))
	g.Expect(caCount(w.bundles[len(w.bundles)-1])).To(Equal(2))

	// Once the old CA has expired, it is dropped.
	deployAt(expiry.Add(time.Hour))
	g.Expect(w.served).To(HaveLen(2))
	g.Expect(caCount(w.bundles[len(w.bundles)-1])).To(Equal(1), "the expired CA is gone")
}
