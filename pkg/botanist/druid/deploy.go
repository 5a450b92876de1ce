package druid

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhookcert"
)

// Deploy applies, in this order, the namespace, the CRDs, the webhook certificate secret and the chart's
// objects. Everything is written with server-side apply under FieldOwner, so a second Deploy changes nothing
// and fields other managers own (e.g. the Deployment's status) are left alone.
func (b *bootstrap) Deploy(ctx context.Context) error {
	log := logf.FromContext(ctx).WithValues("namespace", b.namespace)
	if err := b.ensureNamespace(ctx); err != nil {
		return err
	}
	crds, err := charts.CRDs(charts.EtcdDruid)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		if err := b.apply(ctx, crd); err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.Name, err)
		}
	}
	log.V(1).Info("Applied CRDs", "count", len(crds))
	bundle, err := b.ensureWebhookCertificate(ctx)
	if err != nil {
		return err
	}
	objects, err := b.render(bundle.CACert)
	if err != nil {
		return err
	}
	for _, obj := range objects {
		if err := b.apply(ctx, obj); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	log.V(1).Info("Applied etcd-druid", "objects", len(objects))
	return nil
}

func (b *bootstrap) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.namespace}}
	if err := b.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", b.namespace, err)
	}
	return nil
}

// ensureWebhookCertificate keeps a valid serving certificate for etcd-druid.<ns>.svc and issues a new CA and
// certificate when there is none, it does not cover the service names, or it expires within
// CertificateRenewBefore. The Deployment mounts the secret; the webhook configurations carry the CA.
func (b *bootstrap) ensureWebhookCertificate(ctx context.Context) (*webhookcert.Bundle, error) {
	names := webhookcert.DNSNames(Name, b.namespace)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: WebhookSecretName, Namespace: b.namespace}}
	err := b.client.Get(ctx, client.ObjectKeyFromObject(secret), secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading secret %s: %w", WebhookSecretName, err)
	}
	if err == nil {
		if existing := webhookcert.FromData(secret.Data); existing.Valid(names, b.values.Clock(), CertificateRenewBefore) {
			return existing, nil
		}
	}
	bundle, err := webhookcert.Generate(names, nil, b.values.Clock(), webhookcert.DefaultValidity)
	if err != nil {
		return nil, err
	}
	if _, err := controllerutil.CreateOrPatch(ctx, b.client, secret, func() error {
		secret.Type = corev1.SecretTypeTLS
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels["app.kubernetes.io/name"] = Name
		secret.Data = bundle.Data()
		return nil
	}); err != nil {
		return nil, fmt.Errorf("writing secret %s: %w", WebhookSecretName, err)
	}
	logf.FromContext(ctx).Info("Issued a new webhook serving certificate", "secret", b.namespace+"/"+WebhookSecretName)
	return bundle, nil
}

// apply server-side applies obj (typed with its GVK set, or unstructured) under FieldOwner.
func (b *bootstrap) apply(ctx context.Context, obj runtime.Object) error {
	return Apply(ctx, b.client, obj, FieldOwner)
}

// Apply server-side applies obj (typed with its GVK set, or unstructured) as owner, taking over fields
// other owners hold. A typed object loses its zero creationTimestamp and its status, which an apply
// request must not carry.
func Apply(ctx context.Context, c client.Client, obj runtime.Object, owner string) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		u = &unstructured.Unstructured{Object: content}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
	}
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership)
}
