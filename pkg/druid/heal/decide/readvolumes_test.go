package decide

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func claimOf(name, uid string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)}}
}

// Step 4 deletes only what step 3 read: a claim recreated under the same name (new UID), a claim that
// appeared since, and every claim of a recovery without a record count as unread.
func TestUnreadVolumes(t *testing.T) {
	g := NewWithT(t)
	read := ReadVolumes([]*corev1.PersistentVolumeClaim{claimOf("data-etcd-main-1", "b"), claimOf("data-etcd-main-0", "a")})
	g.Expect(read).To(Equal("data-etcd-main-0=a,data-etcd-main-1=b"))

	g.Expect(UnreadVolumes(read, []*corev1.PersistentVolumeClaim{claimOf("data-etcd-main-0", "a"), claimOf("data-etcd-main-1", "b")})).To(BeEmpty())
	g.Expect(UnreadVolumes(read, []*corev1.PersistentVolumeClaim{claimOf("data-etcd-main-0", "a")})).To(BeEmpty(), "a claim gone since is no concern")
	g.Expect(UnreadVolumes(read, []*corev1.PersistentVolumeClaim{claimOf("data-etcd-main-0", "a"), claimOf("data-etcd-main-1", "recreated"),
		claimOf("data-etcd-main-2", "new")})).To(Equal([]string{"data-etcd-main-1", "data-etcd-main-2"}))
	g.Expect(UnreadVolumes("", []*corev1.PersistentVolumeClaim{claimOf("data-etcd-main-0", "a")})).To(Equal([]string{"data-etcd-main-0"}))
}
