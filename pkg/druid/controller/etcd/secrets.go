package etcd

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// secretReaders are where the secrets gate reads referenced secrets from.
type secretReaders struct {
	// digests is druid's cache, which holds Secrets as digests (SecretDigest): enough to judge a
	// reference, and no request to the apiserver.
	digests client.Reader
	// live reads from the apiserver. It is asked only to confirm a problem the cache shows: a secret
	// written right before its Etcd (as Gardener writes them) may not have reached druid's cache yet when
	// the Etcd does, and reporting such a secret missing would write SecretsMissing, an error and a
	// Warning event for a secret that exists. A problem the apiserver confirms is real; a reference that is
	// fine costs no request.
	live client.Reader
}

// missingSecrets checks every reference and describes each missing secret or key, e.g.
// `secret shoot/etcd-server (spec.etcd.clientUrlTls.serverTLSSecretRef) has no data for key(s) "tls.key"`, or
// for the backup secret `secret shoot/etcd-backup (spec.backup.store.secretRef, provider OSS) has no data
// for key(s) "accessKeySecret"`.
func missingSecrets(ctx context.Context, readers secretReaders, refs []secretref.Reference) ([]string, error) {
	var missing []string
	for _, ref := range refs {
		problem, err := checkReference(ctx, readers.digests, ref)
		if err == nil && problem != "" {
			problem, err = checkReference(ctx, readers.live, ref)
		}
		if err != nil {
			return nil, err
		}
		if problem != "" {
			missing = append(missing, problem)
		}
	}
	return missing, nil
}

// checkReference is the reference's problem as reader shows the secret, "" when none.
func checkReference(ctx context.Context, reader client.Reader, ref secretref.Reference) (string, error) {
	secret := &corev1.Secret{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret)
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("secret %s (%s) not found", ref.Key(), ref.Field), nil
	}
	if err != nil {
		return "", fmt.Errorf("reading secret %s: %w", ref.Key(), err)
	}
	return unmetProblem(ref, secret), nil
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
