package etcdops

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// ReissuedFromAnnotation names, on a Secret issued for a restored Etcd, the server certificate secret of the
// source Etcd it was re-issued from.
const ReissuedFromAnnotation = "restore.gardener-etcd.io/reissued-from"

// IssuedCertificate is a server certificate issued for a restored Etcd's names: the Secret to create (with
// its private key) and what an operator wants to see about it.
type IssuedCertificate struct {
	// Secret is the new Secret: the source secret's data keys, its certificate and key replaced.
	Secret *corev1.Secret
	// From is the source Etcd's secret the certificate was re-issued from.
	From string
	// CASecret is the Secret that holds the CA (and its key) that signed both.
	CASecret string
	// Fields are the new Etcd's references that now name Secret.
	Fields []string
	// DNSNames are the new certificate's DNS names.
	DNSNames []string
	// NotAfter ends the new certificate's validity (the source's lifetime from now). Nothing renews it:
	// the Gardener side rotates only the certificates it issued itself.
	NotAfter time.Time
}

// serverCertificateRef is one reference of an Etcd to a server certificate secret, and the suffix of the
// new secret's name when it is the first reference to that secret.
type serverCertificateRef struct {
	field  string
	ref    *corev1.SecretReference
	suffix string
}

// serverCertificateRefs are the new Etcd's references to server certificates, each of which must carry
// the Etcd's own names: etcd's client port (checked by the sidecar against <name>-local and by clients
// against <name>-client), the sidecar's HTTPS server (the wrapper calls it at <name>-local) and the peer
// port (members reach each other at <member>.<name>-peer). Client certificates and CA bundles carry no
// names of the Etcd and stay.
func serverCertificateRefs(e *druidv1alpha1.Etcd) []serverCertificateRef {
	var refs []serverCertificateRef
	if t := e.Spec.Etcd.ClientUrlTLS; t != nil {
		refs = append(refs, serverCertificateRef{"spec.etcd.clientUrlTls.serverTLSSecretRef", &t.ServerTLSSecretRef, "server-tls"})
	}
	if t := e.Spec.Backup.TLS; t != nil {
		refs = append(refs, serverCertificateRef{"spec.backup.tls.serverTLSSecretRef", &t.ServerTLSSecretRef, "backup-server-tls"})
	}
	if t := e.Spec.Etcd.PeerUrlTLS; t != nil {
		refs = append(refs, serverCertificateRef{"spec.etcd.peerUrlTls.serverTLSSecretRef", &t.ServerTLSSecretRef, "peer-server-tls"})
	}
	return refs
}

// issueServerCertificates issues, for every server certificate secret that newEtcd (a copy of the source
// Etcd's spec) references, a certificate for newEtcd's names from the CA that signed the source's, and
// points newEtcd's references at the new Secrets. Nothing is written: it only reads the source secrets and
// the namespace's Secrets to find the CAs. It fails, naming the secret and the issuer, when a certificate's
// CA or that CA's private key is not in the namespace.
func issueServerCertificates(ctx context.Context, c client.Client, sourceName string, newEtcd *druidv1alpha1.Etcd, now time.Time) ([]IssuedCertificate, error) {
	refs := serverCertificateRefs(newEtcd)
	if len(refs) == 0 {
		return nil, fmt.Errorf("the Etcd %s references no server certificate (spec.etcd.clientUrlTls, spec.backup.tls, spec.etcd.peerUrlTls): there is nothing to issue", sourceName)
	}
	cas, err := namespaceCAs(ctx, c, newEtcd.Namespace)
	if err != nil {
		return nil, err
	}
	var issued []IssuedCertificate
	bySource := map[string]int{}
	for _, r := range refs {
		source := r.ref.Name
		if i, ok := bySource[source]; ok {
			issued[i].Fields = append(issued[i].Fields, r.field)
			r.ref.Name = issued[i].Secret.Name
			continue
		}
		if r.ref.Namespace != "" && r.ref.Namespace != newEtcd.Namespace {
			return nil, fmt.Errorf("%s names secret %s in namespace %s: certificates are issued only from secrets in the Etcd's namespace %s", r.field, source, r.ref.Namespace, newEtcd.Namespace)
		}
		cert, err := reissue(ctx, c, cas, sourceName, newEtcd, r, now)
		if err != nil {
			return nil, err
		}
		bySource[source] = len(issued)
		issued = append(issued, cert)
		r.ref.Name = cert.Secret.Name
	}
	return issued, nil
}

// reissue issues the certificate of one source secret for newEtcd's names.
func reissue(ctx context.Context, c client.Client, cas []namespaceCA, sourceName string, newEtcd *druidv1alpha1.Etcd, r serverCertificateRef,
	now time.Time) (IssuedCertificate, error) {
	source := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: newEtcd.Namespace, Name: r.ref.Name}, source); err != nil {
		return IssuedCertificate{}, fmt.Errorf("reading secret %s (%s): %w", r.ref.Name, r.field, err)
	}
	old, err := etcd.ParseCertificatePEM(source.Data[etcd.DataKeyCertificate])
	if err != nil {
		return IssuedCertificate{}, fmt.Errorf("secret %s (%s) holds no certificate in %s: %w", source.Name, r.field, etcd.DataKeyCertificate, err)
	}
	ca := signerOf(old, cas)
	if ca == nil {
		return IssuedCertificate{}, fmt.Errorf("no Secret in namespace %s holds the CA %q that signed the certificate of secret %s (%s) with its private key (data keys %s and %s): a certificate for the new Etcd's names cannot be issued; nothing was created",
			newEtcd.Namespace, old.Issuer.String(), source.Name, r.field, etcd.DataKeyCACertificate, etcd.DataKeyCAPrivateKey)
	}
	dnsNames := renamedDNSNames(old.DNSNames, sourceName, newEtcd.Name)
	certPEM, keyPEM, err := ca.signer.ReissueWithDNSNames(old, dnsNames, now)
	if err != nil {
		return IssuedCertificate{}, fmt.Errorf("issuing the certificate of secret %s for %s: %w", source.Name, newEtcd.Name, err)
	}
	issued, err := etcd.ParseCertificatePEM(certPEM)
	if err != nil {
		return IssuedCertificate{}, fmt.Errorf("reading the certificate issued for %s: %w", newEtcd.Name, err)
	}
	data := make(map[string][]byte, len(source.Data))
	for k, v := range source.Data {
		data[k] = slices.Clone(v) // a CA certificate beside the leaf (Gardener's ca.crt) stays: the same CA signs
	}
	data[etcd.DataKeyCertificate], data[etcd.DataKeyPrivateKey] = certPEM, keyPEM
	secret := &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		// No labels of the source: those of Gardener's secrets manager would make it adopt or delete the copy.
		ObjectMeta: metav1.ObjectMeta{Namespace: newEtcd.Namespace, Name: newEtcd.Name + "-" + r.suffix,
			Annotations: map[string]string{ReissuedFromAnnotation: source.Name}},
		Type: source.Type,
		Data: data,
	}
	return IssuedCertificate{Secret: secret, From: source.Name, CASecret: ca.secret, Fields: []string{r.field}, DNSNames: dnsNames,
		NotAfter: issued.NotAfter}, nil
}

// renamedDNSNames replaces the old Etcd's name by the new one in each DNS name where it names the Etcd: the
// first label after an optional wildcard, when it is the name or starts with "<name>-" (<name>-local,
// <name>-client.<namespace>.svc, *.<name>-peer.<namespace>). Other names stay.
func renamedDNSNames(names []string, oldName, newName string) []string {
	out := make([]string, 0, len(names))
	for _, name := range names {
		wildcard := ""
		if strings.HasPrefix(name, "*.") {
			wildcard, name = "*.", strings.TrimPrefix(name, "*.")
		}
		first, rest, _ := strings.Cut(name, ".")
		if first == oldName || strings.HasPrefix(first, oldName+"-") {
			first = newName + strings.TrimPrefix(first, oldName)
		}
		if rest != "" {
			first += "." + rest
		}
		out = append(out, wildcard+first)
	}
	return out
}

// namespaceCA is a CA with its private key found in a Secret of the namespace.
type namespaceCA struct {
	secret string
	signer *etcd.SigningCA
}

// namespaceCAs are the CAs of the namespace's Secrets that hold a CA certificate and its private key (the
// project's generator: ca-etcd, ca-etcd-peer; Gardener's secrets manager: ca-etcd-<hash>,
// ca-etcd-peer-<hash>), in name order.
func namespaceCAs(ctx context.Context, c client.Client, namespace string) ([]namespaceCA, error) {
	list := &corev1.SecretList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing the secrets of namespace %s to find the CAs: %w", namespace, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	var cas []namespaceCA
	for _, s := range list.Items {
		certPEM, keyPEM := s.Data[etcd.DataKeyCACertificate], s.Data[etcd.DataKeyCAPrivateKey]
		if len(certPEM) == 0 || len(keyPEM) == 0 {
			continue
		}
		if signer, err := etcd.ParseSigningCA(certPEM, keyPEM); err == nil {
			cas = append(cas, namespaceCA{secret: s.Name, signer: signer})
		}
	}
	return cas, nil
}

// signerOf is the CA that signed cert, or nil.
func signerOf(cert *x509.Certificate, cas []namespaceCA) *namespaceCA {
	for i := range cas {
		if cas[i].signer.Signed(cert) {
			return &cas[i]
		}
	}
	return nil
}

// WithoutPrivateKeys is a copy of an issued Secret for printing: only the data values that are
// certificates (tls.crt, ca.crt) stay, every private key is left out.
func WithoutPrivateKeys(s *corev1.Secret) *corev1.Secret {
	out := s.DeepCopy()
	for k, v := range out.Data {
		if !onlyCertificates(v) {
			delete(out.Data, k)
		}
	}
	return out
}

// onlyCertificates tells whether data is a non-empty sequence of PEM certificates and nothing else.
func onlyCertificates(data []byte) bool {
	found := false
	for rest := data; ; {
		if trimmed := bytes.TrimSpace(rest); len(trimmed) > 0 && !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
			return false // pem.Decode would skip text before a block, and the text would be printed
		}
		block, next := pem.Decode(rest)
		if block == nil {
			return found && len(strings.TrimSpace(string(rest))) == 0
		}
		if block.Type != "CERTIFICATE" {
			return false
		}
		found, rest = true, next
	}
}
