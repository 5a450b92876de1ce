package etcdcontroller_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// backupRestoreContainer is the sidecar container of the Etcd's StatefulSet.
func backupRestoreContainer(g Gomega, sts *appsv1.StatefulSet) corev1.Container {
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == "backup-restore" {
			return c
		}
	}
	g.Expect(sts.Spec.Template.Spec.Containers).To(ContainElement(HaveField("Name", "backup-restore")))
	return corev1.Container{}
}

// An S3 backup secret as Gardener's AWS extension writes it for a workload identity (roleARN, region,
// the token requestor's token, no static keys) is waited for until the token is written, then accepted:
// the StatefulSet mounts the secret where AWS_APPLICATION_CREDENTIALS points, so the sidecar reads the token
// file the requestor keeps fresh.
func TestS3WorkloadIdentitySecretAccepted(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "roleARN", "region", "config", "bucketName")
	createEtcd(t, ns, 1, withStore(druidv1alpha1.StorageProviderAWS))

	etcd := expectCondition(t, ns, etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionFalse, etcdcontroller.ReasonSecretsMissing)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Message).To(ContainSubstring(
		`(spec.backup.store.secretRef, provider S3) has no data for key(s) ("accessKeyID" and "secretAccessKey") or ("roleARN" and "token")`))
	NewWithT(t).Consistently(exists(ns, etcdName, &appsv1.StatefulSet{})).WithTimeout(time.Second).WithPolling(200 * time.Millisecond).ShouldNot(Succeed())

	addSecretData(t, ns, "etcd-backup", map[string][]byte{"token": []byte("eyJhbGciOi.jwt")})
	waitReconciled(t, ns)
	NewWithT(t).Eventually(func(g Gomega) {
		c := backupRestoreContainer(g, statefulSet(g, ns))
		g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "AWS_APPLICATION_CREDENTIALS", Value: "/var/etcd-backup"}))
		g.Expect(c.VolumeMounts).To(ContainElement(And(HaveField("MountPath", "/var/etcd-backup"), HaveField("SubPath", ""))))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// A GCS backup secret as Gardener's GCP extension writes it for a workload identity: serviceaccount.json is
// an external_account configuration whose subject token is the file /var/.gcp/token. Until projectID and
// token are there the flow waits, naming them; then the secret is mounted at /var/.gcp (upstream druid's
// GCS mount), where the configuration expects the token.
func TestGCSWorkloadIdentitySecretAccepted(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	config := []byte(`{"type":"external_account","audience":"//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q",` +
		`"subject_token_type":"urn:ietf:params:oauth:token-type:jwt","token_url":"https://sts.googleapis.com/v1/token",` +
		`"credential_source":{"file":"/var/.gcp/token","format":{"type":"text"}},"universe_domain":"googleapis.com"}`)
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: ns},
		Data: map[string][]byte{"serviceaccount.json": config, "credentialsConfig": config}})).To(Succeed())
	createEtcd(t, ns, 1, withStore(druidv1alpha1.StorageProviderGCP))

	etcd := expectCondition(t, ns, etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionFalse, etcdcontroller.ReasonSecretsMissing)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Message).To(ContainSubstring(
		`(spec.backup.store.secretRef, provider GCS) has no data for key(s) "projectID", "token"`))

	addSecretData(t, ns, "etcd-backup", map[string][]byte{"projectID": []byte("my-project"), "token": []byte("eyJhbGciOi.jwt")})
	waitReconciled(t, ns)
	NewWithT(t).Eventually(func(g Gomega) {
		c := backupRestoreContainer(g, statefulSet(g, ns))
		g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "GOOGLE_APPLICATION_CREDENTIALS", Value: "/var/.gcp/serviceaccount.json"}))
		g.Expect(c.VolumeMounts).To(ContainElement(HaveField("MountPath", "/var/.gcp")))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// Without spec.backup.store.secretRef an S3 store uses the pod's own identity (ambient credentials):
// the StatefulSet comes without a backup secret volume or credentials variable, and nothing is refused.
// A provider whose client reads credentials only from the secret is refused, naming the field.
func TestAmbientCredentials(t *testing.T) {
	withoutSecret := func(provider druidv1alpha1.StorageProvider) func(*druidv1alpha1.Etcd) {
		return func(e *druidv1alpha1.Etcd) {
			withStore(provider)(e)
			e.Spec.Backup.Store.SecretRef = nil
		}
	}
	t.Run("S3", func(t *testing.T) {
		ns := env.CreateNamespace(t)
		createEtcd(t, ns, 1, withoutSecret(druidv1alpha1.StorageProviderS3))
		etcd := waitReconciled(t, ns)
		NewWithT(t).Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
		NewWithT(t).Eventually(func(g Gomega) {
			sts := statefulSet(g, ns)
			for _, v := range sts.Spec.Template.Spec.Volumes {
				g.Expect(v.Secret == nil || v.Secret.SecretName != "etcd-backup").To(BeTrue(), "volume %s", v.Name)
			}
			g.Expect(backupRestoreContainer(g, sts).Env).NotTo(ContainElement(HaveField("Name", "AWS_APPLICATION_CREDENTIALS")))
		}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	})
	t.Run("ABS", func(t *testing.T) {
		ns := env.CreateNamespace(t)
		createEtcd(t, ns, 1, withoutSecret(druidv1alpha1.StorageProviderAzure))
		etcd := expectCondition(t, ns, etcdcontroller.ConditionTypeSecretsReady, druidv1alpha1.ConditionFalse, etcdcontroller.ReasonSecretsMissing)
		NewWithT(t).Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, etcdcontroller.ConditionTypeSecretsReady).Message).To(ContainSubstring(
			"spec.backup.store.secretRef is required for provider ABS"))
		NewWithT(t).Consistently(exists(ns, etcdName, &appsv1.StatefulSet{})).WithTimeout(time.Second).WithPolling(200 * time.Millisecond).ShouldNot(Succeed())
	})
}

func addSecretData(t *testing.T, namespace, name string, data map[string][]byte) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		secret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret)).To(Succeed())
		for k, v := range data {
			secret.Data[k] = v
		}
		g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed())
}
