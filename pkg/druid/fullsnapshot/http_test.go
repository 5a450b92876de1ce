package fullsnapshot

import (
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestHTTPNeedsAClientCertificate(t *testing.T) {
	h := &HTTP{Endpoint: func(*druidv1alpha1.Etcd) string { return "https://127.0.0.1:1" }}
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	if _, err := h.FullSnapshot(t.Context(), etcd); !errors.Is(err, ErrNoClientCertificate) {
		t.Errorf("no backup TLS: got %v, want ErrNoClientCertificate", err)
	}
	etcd.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-server"}}
	if _, err := h.FullSnapshot(t.Context(), etcd); !errors.Is(err, ErrNoClientCertificate) {
		t.Errorf("backup TLS without a client secret: got %v, want ErrNoClientCertificate", err)
	}
}

func TestParse(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	full := `{"kind":"Full","startRevision":0,"lastRevision":1234,"createdOn":"2026-11-26T12:00:00Z","snapDir":"",` +
		`"snapName":"Full-00000000-00001234-1795694400.gz","prefix":"v2","compressionSuffix":".gz","isFinal":false}`
	got := Parse([]byte(full))
	if got == nil || got.EndRevision != 1234 || !got.Timestamp.Time.Equal(at) || got.Name == nil || *got.Name != "Full-00000000-00001234-1795694400.gz" {
		t.Fatalf("Parse(full snapshot) = %+v, want revision 1234 at %s named Full-00000000-00001234-1795694400.gz", got, at)
	}
	for name, body := range map[string]string{
		"empty":       ``,
		"not JSON":    `snapshot taken`,
		"a delta":     `{"kind":"Incr","startRevision":10,"lastRevision":20}`,
		"no revision": `{"kind":"Full","lastRevision":0}`,
	} {
		if got := Parse([]byte(body)); got != nil {
			t.Errorf("Parse(%s) = %+v, want nil", name, got)
		}
	}
}

func TestRecordRoundTripAndNewer(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	name := "Full-00000000-00000042-1795694400.gz"
	record := NewRecord("update", &druidv1alpha1.SnapshotStatus{EndRevision: 42, Name: &name, Timestamp: metav1.NewTime(at)}, at.Add(time.Hour))
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{BeforeUpdateAnnotation: record.Encode()}}}
	got, ok := RecordOf(sts)
	if !ok || got.For != "update" || got.Revision != 42 || got.Name != name || !got.TakenAt.Time.Equal(at) {
		t.Fatalf("RecordOf(Encode(%+v)) = %+v, %v", record, got, ok)
	}
	unknown := NewRecord("update", nil, at)
	if unknown.Snapshot() != nil || !unknown.TakenAt.Time.Equal(at) {
		t.Errorf("a record without the sidecar's report: Snapshot() = %+v, TakenAt %s; want nil, %s", unknown.Snapshot(), unknown.TakenAt, at)
	}
	if _, ok := RecordOf(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{BeforeUpdateAnnotation: "{"}}}); ok {
		t.Errorf("RecordOf(malformed) reported a record")
	}
	older, newer := &druidv1alpha1.SnapshotStatus{EndRevision: 1}, &druidv1alpha1.SnapshotStatus{EndRevision: 2}
	for _, c := range []struct{ a, b, want *druidv1alpha1.SnapshotStatus }{
		{older, newer, newer}, {newer, older, newer}, {nil, older, older}, {older, nil, older}, {nil, nil, nil},
	} {
		if got := Newer(c.a, c.b); got != c.want {
			t.Errorf("Newer(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
