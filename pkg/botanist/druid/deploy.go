package druid

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/charts"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhookcert"
)

// Deploy applies, in this order, the namespace, the CRDs, the webhook certificate secret and the chart's
// objects, after deleting the optional webhook configurations the chart no longer renders; a renewed webhook certificate goes into its Secret after the objects, once the webhook
// configurations trust the new CA too. Everything is written with server-side apply under FieldOwner, so a second Deploy changes nothing
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
	cert, err := b.planWebhookCertificate(ctx)
	if err != nil {
		return err
	}
	// A new certificate is written before the objects when none was served yet (the Deployment mounts it);
	// a renewal only after the webhook configurations trust its CA besides the old one, so that the
	// apiserver verifies whichever of the two certificates druid serves meanwhile.
	if cert.write && !cert.renewal {
		if err := b.writeWebhookCertificate(ctx, cert); err != nil {
			return err
		}
	}
	objects, err := b.render(cert.bundle.CABundle(b.values.Clock()))
	if err != nil {
		return err
	}
	if err := b.deleteUnrenderedWebhookConfigurations(ctx, objects); err != nil {
		return err
	}
	for _, obj := range objects {
		if err := b.apply(ctx, obj); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	if cert.write && cert.renewal {
		if err := b.writeWebhookCertificate(ctx, cert); err != nil {
			return err
		}
	}
	log.V(1).Info("Applied etcd-druid", "objects", len(objects))
	return nil
}

// deleteUnrenderedWebhookConfigurations deletes the optional webhook configurations the chart did not
// render this time (OptionalWebhookConfigurations). Applying only what is rendered would leave, e.g., the
// component protection configuration behind once it is turned off: druid then no longer serves its paths,
// and the configuration, which fails closed, refuses every update and delete of a druid-managed object,
// druid's own included. It runs before the objects are applied, so that the configuration is gone before
// the rolled druid pods stop serving it.
func (b *bootstrap) deleteUnrenderedWebhookConfigurations(ctx context.Context, rendered []*unstructured.Unstructured) error {
	for _, obj := range OptionalWebhookConfigurations() {
		if isRendered(rendered, obj) {
			continue
		}
		if err := client.IgnoreNotFound(b.client.Delete(ctx, obj)); err != nil {
			return fmt.Errorf("deleting %s %s, which the chart no longer renders: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	return nil
}

// OptionalWebhookConfigurations are the webhook configurations the chart renders depending on its values
// while the bootstrap's own settings (webhooks.enabled) stay: the component protection's. Destroy
// deletes them whatever the values.
func OptionalWebhookConfigurations() []client.Object {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: protection.ConfigurationName}}
	vwc.SetGroupVersionKind(admissionregistrationv1.SchemeGroupVersion.WithKind("ValidatingWebhookConfiguration"))
	return []client.Object{vwc}
}

func isRendered(rendered []*unstructured.Unstructured, obj client.Object) bool {
	gvk := obj.GetObjectKind().GroupVersionKind()
	for _, r := range rendered {
		if r.GroupVersionKind() == gvk && r.GetName() == obj.GetName() && r.GetNamespace() == obj.GetNamespace() {
			return true
		}
	}
	return false
}

func (b *bootstrap) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: b.namespace}}
	if err := b.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", b.namespace, err)
	}
	return nil
}

// webhookCertificate is the serving certificate Deploy leaves in the Secret, and whether it must write it.
type webhookCertificate struct {
	secret *corev1.Secret
	bundle *webhookcert.Bundle
	// write: the Secret does not hold bundle yet (new, renewed, or an expired previous CA dropped).
	write bool
	// renewal: bundle replaces a certificate that may be served now, so the webhook configurations must
	// trust the new CA before the Secret changes.
	renewal bool
}

// planWebhookCertificate keeps a valid serving certificate for etcd-druid.<ns>.svc and issues a new CA and
// certificate when there is none, it does not cover the service names, or it expires within
// CertificateRenewBefore. A renewal keeps trusting the old CA until it expires (webhookcert.Renewed); an
// expired previous CA is dropped. The Deployment mounts the Secret; the webhook configurations carry
// Bundle.CABundle.
func (b *bootstrap) planWebhookCertificate(ctx context.Context) (*webhookCertificate, error) {
	names := webhookcert.DNSNames(Name, b.namespace)
	now := b.values.Clock()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: WebhookSecretName, Namespace: b.namespace}}
	err := b.client.Get(ctx, client.ObjectKeyFromObject(secret), secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading secret %s: %w", WebhookSecretName, err)
	}
	found := err == nil
	existing := webhookcert.FromData(secret.Data)
	if found && existing.Valid(names, now, CertificateRenewBefore) {
		pruned := existing.Pruned(now)
		return &webhookCertificate{secret: secret, bundle: pruned, write: pruned != existing}, nil
	}
	next, err := webhookcert.Generate(names, nil, now, webhookcert.DefaultValidity)
	if err != nil {
		return nil, err
	}
	if found && len(existing.Cert) > 0 {
		return &webhookCertificate{secret: secret, bundle: existing.Renewed(next, now), write: true, renewal: true}, nil
	}
	return &webhookCertificate{secret: secret, bundle: next, write: true}, nil
}

// writeWebhookCertificate stores cert's bundle in the Secret.
func (b *bootstrap) writeWebhookCertificate(ctx context.Context, cert *webhookCertificate) error {
	secret := cert.secret
	if _, err := controllerutil.CreateOrPatch(ctx, b.client, secret, func() error {
		secret.Type = corev1.SecretTypeTLS
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels["app.kubernetes.io/name"] = Name
		secret.Data = cert.bundle.Data()
		return nil
	}); err != nil {
		return fmt.Errorf("writing secret %s: %w", WebhookSecretName, err)
	}
	logf.FromContext(ctx).Info("Wrote the webhook serving certificate", "secret", b.namespace+"/"+WebhookSecretName, "renewal", cert.renewal)
	return nil
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
