package fullsnapshot

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/sidecarstandin"
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

// Snapshot asks the sidecar's endpoint of each kind, presents the client certificate, returns the answer
// as it came and turns any other status into an error that carries the sidecar's message.
func TestSnapshotAsksTheSidecarsEndpoint(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	endpoints := &sidecarstandin.Endpoints{}
	var fail atomic.Bool
	sidecar := sidecarstandin.StartHandler(t, c, endpoints, "shoot", func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			http.Error(w, "store unreachable", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte(r.URL.RequestURI()))
	})
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	sidecarstandin.WithBackupTLS(etcd)
	h := &HTTP{Reader: c, Endpoint: endpoints.Of}

	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Kind: podwire.SnapshotFull, Timeout: time.Minute}, "/snapshot/full"},
		{Request{Kind: podwire.SnapshotFull, Final: true, Timeout: time.Minute}, "/snapshot/full?final=true"},
		{Request{Kind: podwire.SnapshotIncr, Timeout: time.Minute}, "/snapshot/delta"},
	} {
		body, err := h.Snapshot(t.Context(), etcd, tc.req)
		if err != nil || string(body) != tc.want {
			t.Errorf("Snapshot(%+v) = %q, %v; want the sidecar's answer to %s", tc.req, body, err, tc.want)
		}
	}
	if got := sidecar.RequestURIs(); len(got) != 3 {
		t.Errorf("the sidecar saw %v, want three authenticated requests", got)
	}

	if _, err := h.Snapshot(t.Context(), etcd, Request{Kind: podwire.SnapshotIncr, Final: true, Timeout: time.Minute}); err == nil {
		t.Error("a final delta: got no error")
	}
	fail.Store(true)
	_, err := h.Snapshot(t.Context(), etcd, Request{Kind: podwire.SnapshotIncr, Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "store unreachable") || !strings.Contains(err.Error(), "delta snapshot") {
		t.Errorf("a failing sidecar: got %v, want an error naming the delta snapshot, the status and the sidecar's message", err)
	}
	var answer *AnswerError
	if !errors.As(err, &answer) {
		t.Errorf("a failing sidecar: got %T, want *AnswerError (the sidecar was reached)", err)
	}
	endpoints = &sidecarstandin.Endpoints{} // nothing listens
	h.Endpoint = endpoints.Of
	if _, err := h.Snapshot(t.Context(), etcd, Request{Kind: podwire.SnapshotFull, Timeout: time.Minute}); err == nil || errors.As(err, &answer) {
		t.Errorf("an unreachable sidecar: got %v, want an error that is no *AnswerError", err)
	}
}

func TestParseAny(t *testing.T) {
	delta := `{"kind":"Incr","startRevision":10,"lastRevision":20,"createdOn":"2026-11-26T12:00:00Z","snapName":"Incr-00000010-00000020-1795694400.gz"}`
	got := ParseAny([]byte(delta))
	if got == nil || got.EndRevision != 20 || got.Name == nil || *got.Name != "Incr-00000010-00000020-1795694400.gz" {
		t.Fatalf("ParseAny(delta) = %+v, want revision 20 named Incr-00000010-00000020-1795694400.gz", got)
	}
	for name, body := range map[string]string{"null": `null`, "not JSON": `ok`, "no revision": `{"kind":"Incr","lastRevision":0}`, "unknown kind": `{"kind":"X","lastRevision":3}`} {
		if got := ParseAny([]byte(body)); got != nil {
			t.Errorf("ParseAny(%s) = %+v, want nil", name, got)
		}
	}
}
