package etcdcontroller_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/sidecarstandin"
)

// snapshotSidecars are the stand-in backup leaders by namespace; druid calls them instead of
// https://<name>-client.<namespace>.svc:8080.
var snapshotSidecars sidecarstandin.Endpoints

// withBackupTLS is Gardener's backup TLS, with the secrets startSnapshotSidecar stores.
var withBackupTLS = sidecarstandin.WithBackupTLS

// snapshotSidecar is the backup leader's sidecar as druid sees it: it answers a successful snapshot with its
// JSON (kind, lastRevision, createdOn, snapName) at the revision set by succeedAt.
type snapshotSidecar struct {
	*sidecarstandin.Sidecar
	mu       sync.Mutex
	taken    int
	revision int64 // 0: the snapshot fails with 500
	refusing bool  // the sidecar refuses druid's certificate (401), as one that authenticates otherwise
}

// refuse lets the following snapshot requests be refused with 401 Unauthorized.
func (s *snapshotSidecar) refuse() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusing = true
}

// succeedAt lets the following snapshots succeed at revision (0: fail again).
func (s *snapshotSidecar) succeedAt(revision int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revision = revision
}

// count is the number of /snapshot/full calls that presented a client certificate.
func (s *snapshotSidecar) count() int { return s.Requests() }

// takenCount is the number of snapshots taken (requests answered 200).
func (s *snapshotSidecar) takenCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// snapshotName is the object name the sidecar gives a full snapshot at revision taken at.
func snapshotName(revision int64, at time.Time) string {
	return fmt.Sprintf("Full-00000000-%08d-%d.gz", revision, at.Unix())
}

// startSnapshotSidecar serves the namespace's stand-in sidecar (failing until succeedAt) and stores the
// backup TLS secrets withBackupTLS names.
func startSnapshotSidecar(t *testing.T, namespace string) *snapshotSidecar {
	t.Helper()
	s := &snapshotSidecar{}
	s.Sidecar = sidecarstandin.Start(t, env.Client, &snapshotSidecars, namespace, s.answer)
	return s
}

func (s *snapshotSidecar) answer(w http.ResponseWriter) {
	s.mu.Lock()
	revision, refusing := s.revision, s.refusing
	if revision != 0 && !refusing {
		s.taken++
	}
	s.mu.Unlock()
	if refusing {
		http.Error(w, "client certificate not accepted", http.StatusUnauthorized)
		return
	}
	if revision == 0 {
		http.Error(w, "taking the full snapshot: uploading: connection reset by peer", http.StatusInternalServerError)
		return
	}
	now := time.Now().UTC().Truncate(time.Second)
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"kind":"Full","startRevision":0,"lastRevision":%d,"createdOn":%q,"snapDir":"","snapName":%q,"prefix":"shoot--a/etcd-main","compressionSuffix":".gz","isFinal":false}`,
		revision, now.Format(time.RFC3339), snapshotName(revision, now))
}
