package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd/gardenersecrets"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdops"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenletsecrets"
)

// createTLSEtcd creates etcd-main as the Gardener side writes it with 3 members: the TLS secrets of the
// project's generator (ca-etcd, ca-etcd-peer, etcd-server-main, etcd-client, etcd-peer-server-main, whose
// server certificates name etcd-main), the members' network access labels for etcd-main-client and the
// spread over nodes by druid's labels of etcd-main's pods.
func createTLSEtcd(t *testing.T, env *envtest.Env, namespace string) *druidv1alpha1.Etcd {
	t.Helper()
	_, err := etcd.NewTLSSecrets(env.Client, namespace, etcd.TLSValues{Role: etcd.RoleMain, HighAvailability: true}).Ensure(context.Background())
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return createTLSEtcdWith(t, env, namespace, etcd.DefaultTLSSecretRefs(etcd.RoleMain))
}

// createTLSEtcdWith is createTLSEtcd with the TLS secrets of refs, which exist.
func createTLSEtcdWith(t *testing.T, env *envtest.Env, namespace string, refs etcd.TLSSecretRefs) *druidv1alpha1.Etcd {
	t.Helper()
	ref := func(name string) corev1.SecretReference {
		return corev1.SecretReference{Name: name, Namespace: namespace}
	}
	bundle := func(r etcd.CABundleRef) druidv1alpha1.SecretReference {
		return druidv1alpha1.SecretReference{SecretReference: ref(r.Name), DataKey: ptr.To(r.DataKey)}
	}
	clientTLS := &druidv1alpha1.TLSConfig{TLSCASecretRef: bundle(refs.ClientCA), ServerTLSSecretRef: ref(refs.Server), ClientTLSSecretRef: ref(refs.Client)}
	obj := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "etcd-main", Labels: map[string]string{"role": "main"}},
		Spec: druidv1alpha1.EtcdSpec{
			Labels: map[string]string{"role": "main",
				"networking.gardener.cloud/to-dns":                                       "allowed",
				"networking.resources.gardener.cloud/to-etcd-main-client-tcp-2379":       "allowed",
				"networking.resources.gardener.cloud/to-etcd-main-client-tcp-2380":       "allowed",
				"networking.resources.gardener.cloud/to-etcd-main-client-tcp-8080":       "allowed",
				"networking.resources.gardener.cloud/to-etcd-events-client-tcp-2379":     "allowed",
				"networking.resources.gardener.cloud/to-all-shoots-etcd-main-client-tcp": "allowed"},
			Replicas: 3,
			SchedulingConstraints: druidv1alpha1.SchedulingConstraints{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: "etcd-main"}},
			}}},
			Etcd: druidv1alpha1.EtcdConfig{ClientUrlTLS: clientTLS.DeepCopy(),
				PeerUrlTLS: &druidv1alpha1.PeerTLSConfig{TLSConfig: druidv1alpha1.TLSConfig{TLSCASecretRef: bundle(refs.PeerCA), ServerTLSSecretRef: ref(refs.PeerServer)}}},
			Backup: druidv1alpha1.BackupSpec{TLS: clientTLS.DeepCopy(), Store: &druidv1alpha1.StoreSpec{Prefix: "shoot--dev--a/etcd-main", Container: ptr.To("bucket"),
				Provider: ptr.To(druidv1alpha1.StorageProviderS3), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}},
		},
	}
	NewWithT(t).Expect(env.Client.Create(context.Background(), obj)).To(Succeed())
	return obj
}

func getSecret(t *testing.T, env *envtest.Env, namespace, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	NewWithT(t).Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, s)).To(Succeed())
	return s
}

// verifyFor checks the certificate of a secret against the CA bundle of caSecret for dnsName, and that the
// secret's key belongs to it.
func verifyFor(t *testing.T, env *envtest.Env, namespace, secret, caSecret, dnsName string) error {
	t.Helper()
	s := getSecret(t, env, namespace, secret)
	if _, err := tls.X509KeyPair(s.Data[etcd.DataKeyCertificate], s.Data[etcd.DataKeyPrivateKey]); err != nil {
		return err
	}
	cert, err := etcd.ParseCertificatePEM(s.Data[etcd.DataKeyCertificate])
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(getSecret(t, env, namespace, caSecret).Data[etcd.DataKeyCABundle])
	_, err = cert.Verify(x509.VerifyOptions{DNSName: dnsName, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
	return err
}

// --issue-certificates gives the new Etcd server and peer certificates for its own names, signed by the CAs
// that signed the existing Etcd's, in Secrets it owns and references; the CA bundles, the client
// certificate and everything of the existing Etcd stay.
func TestEtcdRestoreToRevisionIssuesCertificatesForTheNewNames(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	old := createTLSEtcd(t, env, namespace)
	sourceSecrets := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, sourceSecrets, client.InNamespace(namespace))).To(Succeed())

	out, _, err := run(t, "etcd", "restore-to-revision", "etcd-main", "--kubeconfig", kubeconfigFor(t, env, namespace),
		"--name", "etcd-main-restored", "--prefix", "shoot--dev--a/etcd-main-restored", "--revision", "4711", "--issue-certificates")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).To(ContainSubstring("Created Secret etcd-main-restored-server-tls for spec.etcd.clientUrlTls.serverTLSSecretRef, spec.backup.tls.serverTLSSecretRef: re-issued from etcd-server-main, signed by the CA of ca-etcd"))
	g.Expect(out).To(ContainSubstring("Created Secret etcd-main-restored-peer-server-tls for spec.etcd.peerUrlTls.serverTLSSecretRef: re-issued from etcd-peer-server-main, signed by the CA of ca-etcd-peer"))
	g.Expect(out).NotTo(ContainSubstring("PRIVATE KEY"))

	restored := getEtcd(t, env, namespace, "etcd-main-restored")
	spec := restored.Spec
	g.Expect(spec.Etcd.ClientUrlTLS.ServerTLSSecretRef.Name).To(Equal("etcd-main-restored-server-tls"))
	g.Expect(spec.Backup.TLS.ServerTLSSecretRef.Name).To(Equal("etcd-main-restored-server-tls"))
	g.Expect(spec.Etcd.PeerUrlTLS.ServerTLSSecretRef.Name).To(Equal("etcd-main-restored-peer-server-tls"))
	g.Expect(spec.Etcd.ClientUrlTLS.TLSCASecretRef).To(Equal(old.Spec.Etcd.ClientUrlTLS.TLSCASecretRef), "the same CA bundle")
	g.Expect(spec.Etcd.ClientUrlTLS.ClientTLSSecretRef).To(Equal(old.Spec.Etcd.ClientUrlTLS.ClientTLSSecretRef), "the same client certificate")
	g.Expect(spec.Etcd.PeerUrlTLS.TLSCASecretRef).To(Equal(old.Spec.Etcd.PeerUrlTLS.TLSCASecretRef), "the same peer CA bundle")

	for _, name := range []string{"etcd-main-restored-server-tls", "etcd-main-restored-peer-server-tls"} {
		s := getSecret(t, env, namespace, name)
		g.Expect(s.OwnerReferences).To(ConsistOf(metav1.OwnerReference{APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "Etcd", Name: "etcd-main-restored", UID: restored.UID}),
			"%s goes with the new Etcd", name)
		g.Expect(s.Labels).NotTo(HaveKey(etcd.ManagedByLabel), "%s is not the generator's", name)
	}
	server := "etcd-main-restored-server-tls"
	for _, name := range []string{"etcd-main-restored-local", "etcd-main-restored-client", "etcd-main-restored-client." + namespace + ".svc",
		"etcd-main-restored-client." + namespace + ".svc.cluster.local", "etcd-main-restored-1.etcd-main-restored-peer." + namespace + ".svc"} {
		g.Expect(verifyFor(t, env, namespace, server, "ca-etcd", name)).To(Succeed(), "the server certificate is valid for %s", name)
	}
	g.Expect(verifyFor(t, env, namespace, server, "ca-etcd", "etcd-main-local")).NotTo(Succeed(), "no name of the existing Etcd")
	g.Expect(verifyFor(t, env, namespace, "etcd-main-restored-peer-server-tls", "ca-etcd-peer", "etcd-main-restored-2.etcd-main-restored-peer."+namespace+".svc.cluster.local")).To(Succeed())
	g.Expect(verifyFor(t, env, namespace, "etcd-main-restored-peer-server-tls", "ca-etcd-peer", "etcd-main-2.etcd-main-peer."+namespace+".svc")).NotTo(Succeed())
	oldServer, err := etcd.ParseCertificatePEM(getSecret(t, env, namespace, "etcd-server-main").Data[etcd.DataKeyCertificate])
	g.Expect(err).NotTo(HaveOccurred())
	newServer, err := etcd.ParseCertificatePEM(getSecret(t, env, namespace, server).Data[etcd.DataKeyCertificate])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(newServer.Subject.String()).To(Equal(oldServer.Subject.String()))
	g.Expect(newServer.ExtKeyUsage).To(Equal(oldServer.ExtKeyUsage))
	g.Expect(newServer.KeyUsage).To(Equal(oldServer.KeyUsage))
	g.Expect(newServer.IPAddresses).To(Equal(oldServer.IPAddresses))
	g.Expect(newServer.DNSNames).To(HaveLen(len(oldServer.DNSNames)))
	for _, n := range newServer.DNSNames {
		g.Expect(strings.ReplaceAll(n, "etcd-main-restored", "")).NotTo(ContainSubstring("etcd-main"), "DNS name %s", n)
	}

	for _, s := range sourceSecrets.Items {
		after := getSecret(t, env, namespace, s.Name)
		g.Expect(after.Data).To(Equal(s.Data), "secret %s unchanged", s.Name)
		g.Expect(after.ResourceVersion).To(Equal(s.ResourceVersion), "secret %s unchanged", s.Name)
	}
	g.Expect(getEtcd(t, env, namespace, "etcd-main").Spec).To(Equal(old.Spec))
}

// The new members reach each other (Gardener's resource manager opens the new client Service's ports only
// to pods labelled for it) and spread among themselves, not against the existing Etcd's pods.
func TestEtcdRestoreToRevisionRetargetsNetworkLabelsAndSpread(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	old := createTLSEtcd(t, env, namespace)

	_, _, err := run(t, "etcd", "restore-to-revision", "etcd-main", "--kubeconfig", kubeconfigFor(t, env, namespace),
		"--name", "etcd-main-restored", "--prefix", "restored", "--revision", "5")
	g.Expect(err).NotTo(HaveOccurred())
	restored := getEtcd(t, env, namespace, "etcd-main-restored")
	g.Expect(restored.Spec.Labels).To(Equal(map[string]string{"role": "main",
		"networking.gardener.cloud/to-dns":                                          "allowed",
		"networking.resources.gardener.cloud/to-etcd-main-restored-client-tcp-2379": "allowed",
		"networking.resources.gardener.cloud/to-etcd-main-restored-client-tcp-2380": "allowed",
		"networking.resources.gardener.cloud/to-etcd-main-restored-client-tcp-8080": "allowed",
		"networking.resources.gardener.cloud/to-etcd-events-client-tcp-2379":        "allowed",
		"networking.resources.gardener.cloud/to-all-shoots-etcd-main-client-tcp":    "allowed",
	}), "the access labels for the own client Service follow the name; other labels stay")
	g.Expect(restored.Spec.SchedulingConstraints.TopologySpreadConstraints[0].LabelSelector.MatchLabels).To(Equal(map[string]string{
		druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: "etcd-main-restored"}))
	g.Expect(getEtcd(t, env, namespace, "etcd-main").Spec).To(Equal(old.Spec))
}

// A dry run issues the certificates to show them and creates nothing; the printed Secrets carry the
// certificates and no private key.
func TestEtcdRestoreToRevisionIssueCertificatesDryRunPrintsNoKeys(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	createTLSEtcd(t, env, namespace)

	out, _, err := run(t, "etcd", "restore-to-revision", "etcd-main", "--kubeconfig", kubeconfigFor(t, env, namespace),
		"--name", "etcd-main-restored", "--prefix", "restored", "--revision", "5", "--issue-certificates", "--dry-run", "-o", "yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out).NotTo(ContainSubstring("PRIVATE KEY"))
	list := &corev1.List{}
	g.Expect(yaml.Unmarshal([]byte(out), list)).To(Succeed())
	g.Expect(list.Items).To(HaveLen(3))
	for i, want := range []struct{ name, from string }{
		{"etcd-main-restored-server-tls", "etcd-server-main"}, {"etcd-main-restored-peer-server-tls", "etcd-peer-server-main"},
	} {
		s := &corev1.Secret{}
		g.Expect(yaml.Unmarshal(list.Items[i].Raw, s)).To(Succeed())
		g.Expect(s.Name).To(Equal(want.name))
		g.Expect(s.Annotations).To(HaveKeyWithValue(etcdops.ReissuedFromAnnotation, want.from))
		g.Expect(s.Data).To(HaveKey(etcd.DataKeyCertificate))
		g.Expect(s.Data).NotTo(HaveKey(etcd.DataKeyPrivateKey))
	}
	printed := &druidv1alpha1.Etcd{}
	g.Expect(yaml.Unmarshal(list.Items[2].Raw, printed)).To(Succeed())
	g.Expect(printed.Spec.Etcd.ClientUrlTLS.ServerTLSSecretRef.Name).To(Equal("etcd-main-restored-server-tls"))

	for _, name := range []string{"etcd-main-restored-server-tls", "etcd-main-restored-peer-server-tls"} {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "secret %s not created: %v", name, err)
	}
	expectNoRestoredEtcd(g, env, namespace)
}

// Without the private key of the CA that signed a server certificate (here: the peer CA's secret holds
// only the bundle, as a CA kept elsewhere) nothing can be issued: the refusal names the secret and the
// issuer, and nothing is created — not even the certificate that could be issued.
func TestEtcdRestoreToRevisionIssueCertificatesNeedsTheCAKey(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	createTLSEtcd(t, env, namespace)
	peerCA := getSecret(t, env, namespace, "ca-etcd-peer")
	delete(peerCA.Data, etcd.DataKeyCAPrivateKey)
	g.Expect(env.Client.Update(ctx, peerCA)).To(Succeed())

	_, _, err := run(t, "etcd", "restore-to-revision", "etcd-main", "--kubeconfig", kubeconfigFor(t, env, namespace),
		"--name", "etcd-main-restored", "--prefix", "restored", "--revision", "5", "--issue-certificates")
	g.Expect(err).To(MatchError(SatisfyAll(
		ContainSubstring(`holds the CA "CN=etcd-peer"`),
		ContainSubstring("secret etcd-peer-server-main (spec.etcd.peerUrlTls.serverTLSSecretRef)"),
		ContainSubstring("nothing was created"))))
	secrets := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, secrets, client.InNamespace(namespace))).To(Succeed())
	for _, s := range secrets.Items {
		g.Expect(s.Name).NotTo(HavePrefix("etcd-main-restored"))
	}
	expectNoRestoredEtcd(g, env, namespace)
}

// A Secret of a name the command would create (a leftover of an earlier attempt) is refused, naming it; the
// Secrets created before it are deleted again and no Etcd is created; the leftover stays.
func TestEtcdRestoreToRevisionIssueCertificatesRefusesAnExistingSecret(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	createTLSEtcd(t, env, namespace)
	leftover := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "etcd-main-restored-peer-server-tls"}, Data: map[string][]byte{"tls.crt": []byte("old")}}
	g.Expect(env.Client.Create(ctx, leftover)).To(Succeed())

	_, _, err := run(t, "etcd", "restore-to-revision", "etcd-main", "--kubeconfig", kubeconfigFor(t, env, namespace),
		"--name", "etcd-main-restored", "--prefix", "restored", "--revision", "5", "--issue-certificates")
	g.Expect(err).To(MatchError(ContainSubstring("a secret etcd-main-restored-peer-server-tls already exists in " + namespace)))
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "etcd-main-restored-server-tls"}, &corev1.Secret{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the server certificate's secret is deleted again: %v", err)
	g.Expect(getSecret(t, env, namespace, "etcd-main-restored-peer-server-tls").Data).To(Equal(leftover.Data), "the leftover stays")
	expectNoRestoredEtcd(g, env, namespace)
}

// With the secrets gardenlet's secrets manager keeps (CAs ca-etcd-<hash> and ca-etcd-peer-<hash> beside
// their bundles, certificates with a ca.crt beside the leaf, its labels on every secret), also in the
// middle of a CA rotation (two CAs of each kind, the bundles trusting both), the CA that signed each
// certificate is found by its signature and issues the new one; the new Secrets keep the data keys and
// carry none of the manager's labels, so that it neither adopts nor cleans them up.
func TestEtcdRestoreToRevisionIssuesCertificatesFromGardenersCAs(t *testing.T) {
	env := apiserver(t)
	for name, rotate := range map[string]bool{"CAs never rotated": false, "CA rotation preparing": true} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			namespace := env.CreateNamespace(t)
			refs := gardenerTLSSecrets(t, env, namespace, gardenletsecrets.CARotation{})
			if rotate {
				refs = gardenerTLSSecrets(t, env, namespace, gardenletsecrets.CARotation{LastInitiation: ptr.To(time.Now())})
			}
			createTLSEtcdWith(t, env, namespace, refs)

			out, _, err := run(t, "etcd", "restore-to-revision", "etcd-main", "--kubeconfig", kubeconfigFor(t, env, namespace),
				"--name", "etcd-main-restored", "--prefix", "restored", "--revision", "5", "--issue-certificates")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out).To(ContainSubstring("re-issued from " + refs.Server + ", signed by the CA of ca-etcd"))
			g.Expect(out).To(ContainSubstring("re-issued from " + refs.PeerServer + ", signed by the CA of ca-etcd-peer"))

			g.Expect(verifyFor(t, env, namespace, "etcd-main-restored-server-tls", refs.ClientCA.Name, "etcd-main-restored-local")).To(Succeed())
			g.Expect(verifyFor(t, env, namespace, "etcd-main-restored-server-tls", refs.ClientCA.Name, "etcd-main-restored-client."+namespace+".svc")).To(Succeed())
			g.Expect(verifyFor(t, env, namespace, "etcd-main-restored-peer-server-tls", refs.PeerCA.Name, "etcd-main-restored-0.etcd-main-restored-peer."+namespace+".svc")).To(Succeed())
			for source, issued := range map[string]string{refs.Server: "etcd-main-restored-server-tls", refs.PeerServer: "etcd-main-restored-peer-server-tls"} {
				old, s := getSecret(t, env, namespace, source), getSecret(t, env, namespace, issued)
				g.Expect(s.Type).To(Equal(old.Type))
				g.Expect(slices.Sorted(maps.Keys(s.Data))).To(Equal(slices.Sorted(maps.Keys(old.Data))), "the data keys of %s", source)
				g.Expect(s.Labels).To(BeEmpty(), "none of the secrets manager's labels on %s", issued)
			}
			restored := getEtcd(t, env, namespace, "etcd-main-restored")
			g.Expect(restored.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.Name).To(Equal(refs.ClientCA.Name))
			g.Expect(restored.Spec.Etcd.PeerUrlTLS.TLSCASecretRef.Name).To(Equal(refs.PeerCA.Name))
		})
	}
}

// gardenerTLSSecrets has gardenlet's secrets manager generate the etcd CAs and the certificates of
// etcd-main with peer TLS, as one gardenlet reconcile in the given phase of the CA rotation does.
func gardenerTLSSecrets(t *testing.T, env *envtest.Env, namespace string, rotation gardenletsecrets.CARotation) etcd.TLSSecretRefs {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	sm, err := gardenletsecrets.Manager(ctx, env.Client, namespace, rotation)
	g.Expect(err).NotTo(HaveOccurred())
	refs, err := gardenersecrets.New(sm).TLSSecrets(ctx, etcd.TLSRequest{Namespace: namespace, Role: etcd.RoleMain, PeerTLS: true})
	g.Expect(err).NotTo(HaveOccurred())
	return refs
}

// An Etcd the apiserver stored although its creation answered an error (a lost answer, here a timeout
// after the write) references the issued Secrets: they stay, and the error says so. Deleting them
// would leave the new members without certificates.
func TestEtcdRestoreToRevisionKeepsTheSecretsOfAnEtcdStoredDespiteAnError(t *testing.T) {
	env := apiserver(t)
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	createTLSEtcd(t, env, namespace)
	withWatch, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	lostAnswer := interceptor.NewClient(withWatch, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := c.Create(ctx, obj, opts...); err != nil {
				return err
			}
			if _, isEtcd := obj.(*druidv1alpha1.Etcd); isEtcd {
				return apierrors.NewTimeoutError("the answer was lost", 1)
			}
			return nil
		},
	})

	_, err = etcdops.RestoreToRevision(ctx, lostAnswer, client.ObjectKey{Namespace: namespace, Name: "etcd-main"},
		etcdops.PointInTimeRestore{Name: "etcd-main-restored", Prefix: "restored", Revision: 5, IssueCertificates: true}, false)
	g.Expect(err).To(MatchError(ContainSubstring("the Etcd was stored: its secrets are kept")))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "etcd-main-restored"}, &druidv1alpha1.Etcd{})).To(Succeed())
	for _, name := range []string{"etcd-main-restored-server-tls", "etcd-main-restored-peer-server-tls"} {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &corev1.Secret{})).To(Succeed(), "secret %s stays", name)
	}
}

// expectNoRestoredEtcd checks that the command created no Etcd etcd-main-restored.
func expectNoRestoredEtcd(g Gomega, env *envtest.Env, namespace string) {
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "etcd-main-restored"}, &druidv1alpha1.Etcd{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Etcd not created: %v", err)
}
