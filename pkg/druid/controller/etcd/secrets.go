package etcd

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// secretChecks judges the secrets an Etcd references and remembers each verdict with the secret's
// resourceVersion, so that a spec reconcile of an unchanged Etcd reads no secret from the apiserver:
// druid's cache holds secrets' metadata only (never their data), which tells whether a secret changed since
// it was judged. Only the verdict is kept, never the data. A changed secret is read and judged anew; a
// secret the cache does not show (absent, or not seen yet) is always read.
type secretChecks struct {
	mu       sync.Mutex
	verdicts map[string]secretVerdict // by secretCheckKey
}

// secretVerdict is what a reference's check found ("" when nothing is missing) at a resourceVersion.
type secretVerdict struct{ resourceVersion, problem string }

func newSecretChecks() *secretChecks { return &secretChecks{verdicts: map[string]secretVerdict{}} }

// missing checks every reference and describes each missing secret or key, e.g.
// `secret shoot/etcd-server (spec.etcd.clientUrlTls.serverTLSSecretRef) has no data for key(s) "tls.key"`, or
// for the backup secret `secret shoot/etcd-backup (spec.backup.store.secretRef, provider OSS) has no data
// for key(s) "accessKeySecret"`. cache reads secrets' metadata (druid's cache), reader their data (the
// apiserver).
func (c *secretChecks) missing(ctx context.Context, cache, reader client.Reader, refs []secretref.Reference) ([]string, error) {
	var missing []string
	for _, ref := range refs {
		problem, err := c.check(ctx, cache, reader, ref)
		if err != nil {
			return nil, err
		}
		if problem != "" {
			missing = append(missing, problem)
		}
	}
	return missing, nil
}

// check is one reference's problem, "" when none: the remembered verdict while the cache shows the
// secret at the resourceVersion it was judged at, otherwise a fresh read.
func (c *secretChecks) check(ctx context.Context, cache, reader client.Reader, ref secretref.Reference) (string, error) {
	key := secretCheckKey(ref)
	name := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := cache.Get(ctx, name, meta); err == nil {
		c.mu.Lock()
		v, ok := c.verdicts[key]
		c.mu.Unlock()
		if ok && v.resourceVersion == meta.ResourceVersion {
			return v.problem, nil
		}
	}
	secret := &corev1.Secret{}
	err := reader.Get(ctx, name, secret)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.verdicts, key)
		c.mu.Unlock()
		return fmt.Sprintf("secret %s (%s) not found", ref.Key(), ref.Field), nil
	}
	if err != nil {
		return "", fmt.Errorf("reading secret %s: %w", ref.Key(), err)
	}
	problem := unmetProblem(ref, secret)
	c.mu.Lock()
	c.verdicts[key] = secretVerdict{resourceVersion: secret.ResourceVersion, problem: problem}
	c.mu.Unlock()
	return problem, nil
}

// secretCheckKey identifies a reference with everything its verdict depends on besides the secret.
func secretCheckKey(ref secretref.Reference) string {
	return fmt.Sprintf("%s|%s|%s|%v", ref.Key(), ref.Field, ref.Provider, ref.Required)
}

// unmetProblem describes what the secret lacks of the reference's requirements, "" when nothing.
func unmetProblem(ref secretref.Reference, secret *corev1.Secret) string {
	unmet := backupsecret.UnmetIn(ref.Required, ref.Provider, secret.Data)
	if len(unmet) == 0 {
		return ""
	}
	where := ref.Field
	if ref.Provider != "" {
		where += ", provider " + string(ref.Provider)
	}
	return fmt.Sprintf("secret %s (%s) has no data for key(s) %s", ref.Key(), where, backupsecret.Describe(unmet))
}
