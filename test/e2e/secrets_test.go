//go:build e2e

package e2e

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario 5: both gates against a missing TLS secret. Gardener's side refuses to write an
// Etcd while a secret it would reference is missing; druid, given an Etcd whose secret disappeared after
// that check, creates no StatefulSet and says why in SecretsReady. Once the secret is back, it converges.
var _ = Describe("missing TLS secret", func() {
	It("holds the StatefulSet back until the secret exists", func(ctx SpecContext) {
		env := newShoot(ctx, "secrets", 0)
		values := etcd.Values{Role: etcd.RoleEvents, WaitTimeout: env.Timeout, WaitInterval: env.Interval}
		external := values
		external.TLS = etcd.ExistingTLS{Refs: etcd.DefaultTLSSecretRefs(etcd.RoleEvents)}
		stsKey := client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(etcd.RoleEvents)}

		By("Gardener's side: Deploy with TLS secrets owned elsewhere refuses while they are missing")
		err := etcd.New(env.Client, env.Namespace, external).Deploy(ctx)
		var missing *etcd.MissingSecretError
		Expect(errors.As(err, &missing)).To(BeTrue(), "Deploy returned %v", err)
		Expect(err.Error()).To(ContainSubstring(etcd.ClientSecretName))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, stsKey, &druidv1alpha1.Etcd{}))).To(BeTrue(), "an Etcd was written")

		By("druid's side: the client secret disappears between botanist's check and the Etcd's creation")
		withWatch, err := client.NewWithWatch(env.Seed.RESTConfig(), client.Options{Scheme: seedworkflow.Scheme})
		Expect(err).NotTo(HaveOccurred())
		racing := interceptor.NewClient(withWatch, interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, isEtcd := obj.(*druidv1alpha1.Etcd); isEtcd {
					secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: env.Namespace, Name: etcd.ClientSecretName}}
					if err := c.Delete(ctx, secret); err != nil {
						return err
					}
				}
				return c.Create(ctx, obj, opts...)
			},
		})
		Expect(etcd.New(racing, env.Namespace, values).Deploy(ctx)).To(Succeed())
		c := expectCondition(ctx, env, etcd.RoleEvents, etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionFalse, etcdcontroller.ReasonSecretsMissing)
		Expect(c.Message).To(ContainSubstring(etcd.ClientSecretName))
		obj := getEtcd(ctx, env, etcd.RoleEvents)
		Expect(obj.Status.LastErrors).To(ContainElement(HaveField("Code", etcdcontroller.ErrorCodeSecretsMissing)))
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, stsKey, &appsv1.StatefulSet{}))).To(BeTrue(),
			"druid created the StatefulSet although %s is missing", etcd.ClientSecretName)

		By("the secret is re-issued by a Deploy that owns the TLS secrets")
		measure("secret created → Etcd ready", func() {
			Expect(etcd.New(env.Client, env.Namespace, values).Deploy(ctx)).To(Succeed())
			Expect(seedworkflow.Component(env, etcd.RoleEvents).Wait(ctx)).To(Succeed())
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleEvents, 1, false)).To(Succeed())
		})
		expectCondition(ctx, env, etcd.RoleEvents, etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionTrue, "")
		Expect(env.Client.Get(ctx, stsKey, &appsv1.StatefulSet{})).To(Succeed())
	})
})
