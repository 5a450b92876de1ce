// Package etcdswitchover_test hands a shoot namespace that gardenlet's own etcd handling left behind to the
// project's etcd component, against a real apiserver: the TLS secrets are made by Gardener's real secrets
// manager exactly as gardenlet's botanist asks it, and the Etcd references them as Gardener's etcd component
// writes it. The component must keep every TLS reference, keep the server certificate verifiable with the CA
// bundle kube-apiserver trusts, and never write into a secret it did not create.
package etcdswitchover_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	gardeneretcd "github.com/gardener/gardener/pkg/component/etcd/etcd"
	secretsutils "github.com/gardener/gardener/pkg/utils/secrets"
	secretsmanager "github.com/gardener/gardener/pkg/utils/secrets/manager"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenletsecrets"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }

// gardenletSecretsManager is what one gardenlet reconcile of the shoot starts with (gardenletsecrets.Manager).
func gardenletSecretsManager(t *testing.T, namespace string, rotation gardenletsecrets.CARotation) secretsmanager.Interface {
	t.Helper()
	sm, err := gardenletsecrets.Manager(context.Background(), env.Client, namespace, rotation)
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

// gardenletReconcile is one reconcile of the shoot by gardenlet, as far as etcd TLS goes: the CAs (above),
// the leaf certificates from Gardener's etcd component's own generate functions, and the secrets manager's
// Cleanup at the end, which deletes what the reconcile no longer used (an old CA after the rotation).
func gardenletReconcile(t *testing.T, namespace, role string, ha bool, rotation gardenletsecrets.CARotation) etcd.TLSSecretRefs {
	t.Helper()
	ctx := context.Background()
	sm := gardenletSecretsManager(t, namespace, rotation)
	name := etcd.Name(role)
	caBundle, server, clientSecret, err := gardeneretcd.GenerateServerAndClientCertificates(ctx, sm, role,
		gardeneretcd.ClientServiceDNSNames(name, namespace, false), nil)
	if err != nil {
		t.Fatal(err)
	}
	refs := etcd.TLSSecretRefs{
		ClientCA: etcd.CABundleRef{Name: caBundle.Name, DataKey: "bundle.crt"},
		Server:   server.Name,
		Client:   clientSecret.Name,
	}
	if ha {
		peerCA, found := sm.Get(v1beta1constants.SecretNameCAETCDPeer)
		if !found {
			t.Fatal("peer CA not generated")
		}
		peerServer, err := gardeneretcd.GeneratePeerCertificate(ctx, sm, role, peerDNSNames(name, namespace), nil)
		if err != nil {
			t.Fatal(err)
		}
		refs.PeerCA = etcd.CABundleRef{Name: peerCA.Name, DataKey: "bundle.crt"}
		refs.PeerServer = peerServer.Name
	}
	if err := sm.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	return refs
}

// gardenletEtcd writes etcd-<role> as Gardener's etcd component does (pkg/component/etcd/etcd/etcd.go
// Deploy) with the TLS secrets of a gardenlet reconcile. Fields the TLS switch-over does not depend on
// (backup store) are left out.
func gardenletEtcd(t *testing.T, namespace, role string, refs etcd.TLSSecretRefs) {
	t.Helper()
	name := etcd.Name(role)
	replicas := "1"
	peer := ""
	if refs.PeerServer != "" {
		replicas = "3"
		peer = `
    peerUrlTls:
      tlsCASecretRef: {name: ` + refs.PeerCA.Name + `, namespace: ` + namespace + `, dataKey: bundle.crt}
      serverTLSSecretRef: {name: ` + refs.PeerServer + `, namespace: ` + namespace + `}`
	}
	tls := `
      tlsCASecretRef: {name: ` + refs.ClientCA.Name + `, namespace: ` + namespace + `, dataKey: bundle.crt}
      serverTLSSecretRef: {name: ` + refs.Server + `, namespace: ` + namespace + `}
      clientTLSSecretRef: {name: ` + refs.Client + `, namespace: ` + namespace + `}`
	manifest := `
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: ` + name + `
  namespace: ` + namespace + `
  labels: {gardener.cloud/role: controlplane, role: ` + role + `}
  annotations: {gardener.cloud/operation: reconcile, gardener.cloud/timestamp: "2026-08-21T10:00:00.123456789Z"}
spec:
  replicas: ` + replicas + `
  priorityClassName: gardener-system-500
  selector:
    matchLabels: {gardener.cloud/role: controlplane, role: ` + role + `, app: etcd-statefulset}
  labels: {gardener.cloud/role: controlplane, role: ` + role + `, app: etcd-statefulset}
  etcd:
    metrics: extensive
    defragmentationSchedule: "34 12 * * *"
    quota: 8Gi
    clientPort: 2379
    serverPort: 2380
    wrapperPort: 9095
    clientUrlTls:` + tls + peer + `
  backup:
    port: 8080
    tls:` + tls + `
  storageCapacity: 25Gi
  volumeClaimTemplate: ` + role + `-etcd
`
	obj := &druidv1alpha1.Etcd{}
	if err := yaml.UnmarshalStrict([]byte(manifest), obj); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

// peerDNSNames are the names Gardener's etcd component gives the peer certificate (peerServiceDNSNames).
func peerDNSNames(name, namespace string) []string {
	var names []string
	for _, service := range []string{name + "-peer", "*." + name + "-peer"} {
		names = append(names, service, service+"."+namespace, service+"."+namespace+".svc", service+"."+namespace+".svc.cluster.local")
	}
	return names
}

func getEtcd(g Gomega, namespace, role string) *druidv1alpha1.Etcd {
	obj := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: etcd.Name(role)}, obj)).To(Succeed())
	return obj
}

func getSecret(g Gomega, namespace, name string) *corev1.Secret {
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, secret)).To(Succeed())
	return secret
}

// tlsReferences are every TLS secret reference of an Etcd, by where it sits.
func tlsReferences(obj *druidv1alpha1.Etcd) map[string]string {
	refs := map[string]string{}
	add := func(prefix string, tls *druidv1alpha1.TLSConfig) {
		if tls == nil {
			return
		}
		dataKey := ""
		if tls.TLSCASecretRef.DataKey != nil {
			dataKey = *tls.TLSCASecretRef.DataKey
		}
		refs[prefix+".tlsCASecretRef"] = tls.TLSCASecretRef.Name + "/" + dataKey
		refs[prefix+".serverTLSSecretRef"] = tls.ServerTLSSecretRef.Name
		refs[prefix+".clientTLSSecretRef"] = tls.ClientTLSSecretRef.Name
	}
	add("etcd.clientUrlTls", obj.Spec.Etcd.ClientUrlTLS)
	add("backup.tls", obj.Spec.Backup.TLS)
	if obj.Spec.Etcd.PeerUrlTLS != nil {
		add("etcd.peerUrlTls", &obj.Spec.Etcd.PeerUrlTLS.TLSConfig)
	}
	return refs
}

// verifyServer checks the server certificate an Etcd references against a CA bundle, as kube-apiserver
// does when it connects to the client service.
func verifyServer(g Gomega, namespace, role string, obj *druidv1alpha1.Etcd, bundlePEM []byte) error {
	return verifyLeaf(g, namespace, obj.Spec.Etcd.ClientUrlTLS.ServerTLSSecretRef.Name, bundlePEM,
		etcd.Name(role)+"-client."+namespace+".svc", x509.ExtKeyUsageServerAuth)
}

// verifyLeaf checks the certificate of a secret against a CA bundle for a name (none for client
// certificates) and usage.
func verifyLeaf(g Gomega, namespace, secretName string, bundlePEM []byte, dnsName string, usage x509.ExtKeyUsage) error {
	secret := getSecret(g, namespace, secretName)
	block, _ := pem.Decode(secret.Data["tls.crt"])
	g.Expect(block).NotTo(BeNil())
	cert, err := x509.ParseCertificate(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	roots := x509.NewCertPool()
	g.Expect(roots.AppendCertsFromPEM(bundlePEM)).To(BeTrue())
	_, err = cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: dnsName, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

// referencedBundle is the CA bundle the Etcd's client TLS references.
func referencedBundle(g Gomega, namespace string, obj *druidv1alpha1.Etcd) []byte {
	ref := obj.Spec.Etcd.ClientUrlTLS.TLSCASecretRef
	return getSecret(g, namespace, ref.Name).Data[*ref.DataKey]
}

// bundleOf is the CA bundle gardenlet hands kube-apiserver for etcd: the secrets manager's ca-etcd bundle.
func bundleOf(g Gomega, sm secretsmanager.Interface) []byte {
	bundle, found := sm.Get(v1beta1constants.SecretNameCAETCD)
	g.Expect(found).To(BeTrue())
	g.Expect(bundle.Name).To(HavePrefix("ca-etcd-bundle-"))
	return bundle.Data[secretsutils.DataKeyCertificateBundle]
}

// bundleSize counts the CAs of a PEM bundle.
func bundleSize(bundlePEM []byte) int { return strings.Count(string(bundlePEM), "BEGIN CERTIFICATE") }
