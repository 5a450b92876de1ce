package etcdcontroller_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

func withStore(provider druidv1alpha1.StorageProvider) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "shoot--a/etcd-main", Container: ptr.To("bucket"),
			Provider: ptr.To(provider), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
	}
}

// A backup secret that lacks a key its provider needs stops the spec flow before any pod could start and
// fail on it: SecretsReady=False naming secret, provider and key, a Warning event, no StatefulSet. Adding the
// key lets the flow proceed.
func TestBackupSecretMissingAProviderKeyBlocksStatefulSet(t *testing.T) {
	for _, tc := range []struct {
		provider druidv1alpha1.StorageProvider
		present  []string
		missing  string // as the message names it
		fix      []string
	}{
		{druidv1alpha1.StorageProviderAlicloud, []string{"storageEndpoint", "accessKeyID"}, `(spec.backup.store.secretRef, provider OSS) has no data for key(s) "accessKeySecret"`, []string{"accessKeySecret"}},
		{druidv1alpha1.StorageProviderDell, []string{"endpoint", "secretAccessKey"}, `(spec.backup.store.secretRef, provider ECS) has no data for key(s) "accessKeyID"`, []string{"accessKeyID"}},
		{druidv1alpha1.StorageProviderOpenShift, []string{"endpoint", "accessKeyID", "secretAccessKey"}, `(spec.backup.store.secretRef, provider OCS) has no data for key(s) "region"`, []string{"region"}},
		{druidv1alpha1.StorageProviderOpenStack, []string{"authURL", "domainName", "tenantName", "region", "username"},
			`(spec.backup.store.secretRef, provider Swift) has no data for key(s) ("username" and "password") or ("applicationCredentialID" and "applicationCredentialSecret")`,
			[]string{"applicationCredentialID", "applicationCredentialSecret"}},
	} {
		t.Run(string(tc.provider), func(t *testing.T) {
			g := NewWithT(t)
			ns := env.CreateNamespace(t)
			createSecret(t, ns, "etcd-backup", tc.present...)
			createEtcd(t, ns, 1, withStore(tc.provider))

			etcd := expectCondition(t, ns, etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionFalse, etcdcontroller.ReasonSecretsMissing)
			message := druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Message
			g.Expect(message).To(ContainSubstring("secret " + ns + "/etcd-backup " + tc.missing))
			g.Expect(etcd.Status.LastErrors).To(ConsistOf(HaveField("Code", druidv1alpha1.ErrorCode("ERR_SECRETS_MISSING"))))
			NewWithT(t).Eventually(func(g Gomega) []corev1.Event { return warningEvents(g, ns, etcdcontroller.EventReasonSecretsMissing) }).
				WithTimeout(timeout).WithPolling(poll).Should(ContainElement(HaveField("Message", ContainSubstring(tc.missing))))
			NewWithT(t).Consistently(exists(ns, etcdName, &appsv1.StatefulSet{})).WithTimeout(time.Second).WithPolling(200 * time.Millisecond).ShouldNot(Succeed())

			NewWithT(t).Eventually(func(g Gomega) {
				secret := &corev1.Secret{}
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "etcd-backup"}, secret)).To(Succeed())
				for _, k := range tc.fix {
					secret.Data[k] = []byte("data of " + k)
				}
				g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
			}).WithTimeout(timeout).Should(Succeed())
			etcd = waitReconciled(t, ns)
			g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
			g.Expect(exists(ns, etcdName, &appsv1.StatefulSet{})()).To(Succeed())
		})
	}
}
