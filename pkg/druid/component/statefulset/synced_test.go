package statefulset

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestNewerPrefersWhatTheCacheHasNotSeen(t *testing.T) {
	sts := func(uid string, generation int64) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Generation: generation}}
	}
	cached, created := sts("a", 2), sts("a", 3)
	for _, tc := range []struct {
		name           string
		cached, synced *appsv1.StatefulSet
		want           *appsv1.StatefulSet
	}{
		{"no spec flow", cached, nil, cached},
		{"not in the cache yet", nil, created, created},
		{"cache behind the patch", cached, created, created},
		{"cache caught up (and may carry a newer status)", sts("a", 3), created, nil},
		{"cache holds one deleted since", sts("old", 7), created, created},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == nil {
				want = tc.cached
			}
			NewWithT(t).Expect(Newer(tc.cached, tc.synced)).To(BeIdenticalTo(want))
		})
	}
}
