package etcd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// TLSSource supplies the TLS secrets an Etcd references. Whoever owns those secrets decides their names and
// when they rotate; the component only references what the source returns and checks that it exists. The
// project's generator (GeneratedTLS) is one source, the secrets that someone else keeps under known names
// (ExistingTLS) another, and gardenlet's secrets manager a third (package gardenersecrets), so a shoot that
// gardenlet's etcd handling left behind keeps the secrets kube-apiserver already trusts.
type TLSSource interface {
	// TLSSecrets makes sure the secrets of the request exist (as far as the source creates any) and returns
	// their references. The peer references must be set when req.PeerTLS is set.
	TLSSecrets(ctx context.Context, req TLSRequest) (TLSSecretRefs, error)
}

// ContentNamedTLS is implemented by a TLSSource whose secret names change whenever their content does, as
// the names of gardenlet's secrets manager carry a hash of it. A new peer CA bundle or peer certificate then
// changes the references in the pod template and druid rolls the members anyway, so the component leaves
// PeerTLSChecksumAnnotation as the Etcd has it: Gardener's etcd component never writes it, and adding,
// updating or removing it would roll every member of an etcd it wrote once for nothing. A source without this
// method keeps its names when the content changes (GeneratedTLS, ExistingTLS) and gets the annotation.
type ContentNamedTLS interface {
	TLSSource
	// NamesFollowContent reports whether every name the source returns changes with the secret's content.
	NamesFollowContent() bool
}

// TLSRequest is what an Etcd needs TLS secrets for.
type TLSRequest struct {
	// Namespace is the control-plane namespace of the Etcd; the secrets live there.
	Namespace string
	// Role is the etcd role (main, events); server certificates carry the role's service names.
	Role string
	// PeerTLS asks for the peer CA bundle and peer certificate of a multi-member etcd.
	PeerTLS bool
}

// CABundleRef is a secret and the data key of the CA bundle in it.
type CABundleRef struct {
	Name    string
	DataKey string
}

// TLSSecretRefs are the secrets an Etcd references, as values so that a caller can see (and a test can
// compare) exactly what will be written.
type TLSSecretRefs struct {
	// ClientCA verifies the server and client certificates (clientUrlTls and backup.tls). It is a bundle so
	// that a CA rotation that trusts the old and the new CA never needs a different key.
	ClientCA CABundleRef
	// Server is the server certificate of etcd and of the backup-restore sidecar.
	Server string
	// Client is the client certificate the sidecar presents to etcd.
	Client string
	// PeerCA verifies peer certificates; empty without peer TLS.
	PeerCA CABundleRef
	// PeerServer is the peer certificate of the members; empty without peer TLS.
	PeerServer string
}

// DefaultTLSSecretRefs are the names the project's generator writes for a role, peer secrets included.
func DefaultTLSSecretRefs(role string) TLSSecretRefs {
	return TLSSecretRefs{
		ClientCA:   CABundleRef{Name: CASecretName, DataKey: DataKeyCABundle},
		Server:     ServerSecretName(role),
		Client:     ClientSecretName,
		PeerCA:     CABundleRef{Name: PeerCASecretName, DataKey: DataKeyCABundle},
		PeerServer: PeerServerSecretName(role),
	}
}

// withoutPeer drops the peer references of an etcd without peer TLS.
func (r TLSSecretRefs) withoutPeer() TLSSecretRefs {
	r.PeerCA, r.PeerServer = CABundleRef{}, ""
	return r
}

// validate says which reference a source left empty, so that a broken source fails before anything is written.
func (r TLSSecretRefs) validate(peerTLS bool) error {
	var missing []string
	for field, value := range map[string]string{
		"ClientCA.Name": r.ClientCA.Name, "ClientCA.DataKey": r.ClientCA.DataKey, "Server": r.Server, "Client": r.Client,
	} {
		if value == "" {
			missing = append(missing, field)
		}
	}
	if peerTLS {
		for field, value := range map[string]string{"PeerCA.Name": r.PeerCA.Name, "PeerCA.DataKey": r.PeerCA.DataKey, "PeerServer": r.PeerServer} {
			if value == "" {
				missing = append(missing, field)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("the TLS source returned no %v", missing)
	}
	return nil
}

// GeneratedTLS is the project's own generator as a TLSSource: it writes and renews ca-etcd, ca-etcd-peer,
// etcd-server-<role>, etcd-client and etcd-peer-server-<role> (tls.go). It only ever writes secrets it created
// itself; a secret of one of these names made by someone else is an error (ForeignSecretError).
type GeneratedTLS struct {
	client client.Client
	clock  func() time.Time
}

// NewGeneratedTLS returns the project's generator writing with c; clock dates the certificates (time.Now when
// nil).
func NewGeneratedTLS(c client.Client, clock func() time.Time) *GeneratedTLS {
	return &GeneratedTLS{client: c, clock: clock}
}

// TLSSecrets ensures the generated secrets of the request and returns their references.
func (s *GeneratedTLS) TLSSecrets(ctx context.Context, req TLSRequest) (TLSSecretRefs, error) {
	names, err := s.generator(req).Ensure(ctx)
	if err != nil {
		return TLSSecretRefs{}, err
	}
	refs := TLSSecretRefs{
		ClientCA: CABundleRef{Name: names.CA, DataKey: DataKeyCABundle},
		Server:   names.Server,
		Client:   names.Client,
	}
	if req.PeerTLS {
		refs.PeerCA = CABundleRef{Name: names.PeerCA, DataKey: DataKeyCABundle}
		refs.PeerServer = names.PeerServer
	}
	return refs, nil
}

func (s *GeneratedTLS) generator(req TLSRequest) *TLSSecrets {
	return NewTLSSecrets(s.client, req.Namespace, TLSValues{Role: req.Role, HighAvailability: req.PeerTLS, Clock: s.clock})
}

// ExistingTLS references secrets that someone else writes and rotates under fixed names; it writes nothing.
// A missing secret or key then makes Deploy return a *MissingSecretError until the owner wrote it.
type ExistingTLS struct {
	Refs TLSSecretRefs
}

// TLSSecrets returns the fixed references (without the peer ones unless peer TLS is asked for).
func (s ExistingTLS) TLSSecrets(_ context.Context, req TLSRequest) (TLSSecretRefs, error) {
	if !req.PeerTLS {
		return s.Refs.withoutPeer(), nil
	}
	return s.Refs, nil
}

// ForeignSecretError says that the project's generator found a secret under one of its names that it did not
// create (it lacks ManagedByLabel=gardener-etcd), for example the never-rotated ca-etcd of gardenlet's
// secrets manager. The generator neither adopts nor overwrites it: that secret's owner rotates it and other
// components trust it. Pass that owner's secrets through Values.TLS instead.
type ForeignSecretError struct {
	Namespace string
	Name      string
	// Labels of the secret, which usually say who owns it.
	Labels map[string]string
}

func (e *ForeignSecretError) Error() string {
	return fmt.Sprintf("secret %s/%s was not created by gardener-etcd (labels %v): it is left untouched; pass the TLS secrets of its owner in Values.TLS (for gardenlet's secrets manager: package gardenersecrets)",
		e.Namespace, e.Name, e.Labels)
}

// IsForeignSecret tells whether err comes from a secret the generator did not create.
func IsForeignSecret(err error) bool {
	var foreign *ForeignSecretError
	return errors.As(err, &foreign)
}

// tlsSource is Values.TLS, or the project's generator with the component's client and clock.
func (e *etcd) tlsSource() TLSSource {
	if e.values.TLS != nil {
		return e.values.TLS
	}
	return NewGeneratedTLS(e.client, e.values.Clock)
}

// tlsSecretRefs asks the TLS source for the secrets of this Etcd.
func (e *etcd) tlsSecretRefs(ctx context.Context, peerTLS bool) (TLSSecretRefs, error) {
	refs, err := e.tlsSource().TLSSecrets(ctx, TLSRequest{Namespace: e.namespace, Role: e.values.Role, PeerTLS: peerTLS})
	if err != nil {
		return TLSSecretRefs{}, fmt.Errorf("TLS secrets of %s/%s: %w", e.namespace, e.name(), err)
	}
	if err := refs.validate(peerTLS); err != nil {
		return TLSSecretRefs{}, fmt.Errorf("TLS secrets of %s/%s: %w", e.namespace, e.name(), err)
	}
	return refs, nil
}

// tlsRequirements are the TLS secrets of refs and the keys druid and the pods read from them.
func tlsRequirements(refs TLSSecretRefs) []secretRequirement {
	leaf := []string{DataKeyCertificate, DataKeyPrivateKey}
	reqs := []secretRequirement{
		keysRequirement(refs.ClientCA.Name, refs.ClientCA.DataKey),
		keysRequirement(refs.Server, leaf...),
		keysRequirement(refs.Client, leaf...),
	}
	if refs.PeerServer != "" {
		reqs = append(reqs, keysRequirement(refs.PeerCA.Name, refs.PeerCA.DataKey), keysRequirement(refs.PeerServer, leaf...))
	}
	return reqs
}

// clientTLS is used by etcd's client port and by the sidecar's HTTP server: both present the server
// certificate and accept clients that the CA bundle trusts, referenced as a bundle so that a CA rotation
// never needs another key.
func clientTLS(namespace string, refs TLSSecretRefs) *druidv1alpha1.TLSConfig {
	return &druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: refs.ClientCA.Name, Namespace: namespace}, DataKey: ptr.To(refs.ClientCA.DataKey)},
		ServerTLSSecretRef: corev1.SecretReference{Name: refs.Server, Namespace: namespace},
		ClientTLSSecretRef: corev1.SecretReference{Name: refs.Client, Namespace: namespace},
	}
}

// peerTLSChecksum is the value of PeerTLSChecksumAnnotation: a hash of what the members load from the peer
// secrets at start, or "" (the annotation is left as the Etcd has it) when the source's names follow their
// content (ContentNamedTLS).
func (e *etcd) peerTLSChecksum(refs TLSSecretRefs, secrets map[string]*corev1.Secret) string {
	if source, ok := e.tlsSource().(ContentNamedTLS); ok && source.NamesFollowContent() {
		return ""
	}
	h := sha256.New()
	h.Write(secrets[refs.PeerCA.Name].Data[refs.PeerCA.DataKey])
	h.Write(secrets[refs.PeerServer].Data[DataKeyCertificate])
	return hex.EncodeToString(h.Sum(nil))
}

// servedTLSSecretRefs are the client CA bundle and client certificate the sidecar of the existing Etcd
// trusts (spec.backup.tls); without an Etcd, the generator's names.
func (e *etcd) servedTLSSecretRefs(ctx context.Context) (TLSSecretRefs, error) {
	refs := DefaultTLSSecretRefs(e.values.Role).withoutPeer()
	existing, err := e.getExisting(ctx)
	if err != nil || existing == nil || existing.Spec.Backup.TLS == nil {
		return refs, err
	}
	tls := existing.Spec.Backup.TLS
	refs.ClientCA = CABundleRef{Name: tls.TLSCASecretRef.Name, DataKey: ptr.Deref(tls.TLSCASecretRef.DataKey, druidv1alpha1.DefaultCADataKey)}
	refs.Server, refs.Client = tls.ServerTLSSecretRef.Name, tls.ClientTLSSecretRef.Name
	return refs, nil
}
