package copybackupstask

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/copybackupstask"
	"github.com/gardener-etcd/gardener-etcd/test/support/hostile"
)

// This suite registers no validation webhook, as gardenlet's deployment of druid registers none for copy
// tasks: the apiserver stores whatever the CRD schema admits, and druid must refuse itself what the
// webhook would.

// TestReconcilerRefusesCopyTasksTheWebhookRefuses sends every copy task the validation webhook's sweep
// refuses (hostile.CopyTasks) straight to druid: none gets a worker Job; each fails for its generation
// (Failed=True and Succeeded=False with reason InvalidSpec, lastError) and gets a Warning event InvalidSpec,
// all naming the field. Rows the CRD schema already refuses are skipped (the apiserver stores nothing).
func TestReconcilerRefusesCopyTasksTheWebhookRefuses(t *testing.T) {
	namespace := env.CreateNamespace(t)
	created, err := hostile.CreateRefused(ctx, env.Client, hostile.CopyTasks,
		func() *druidv1alpha1.EtcdCopyBackupsTask { return hostile.CopyTask(namespace) })
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(len(created)).To(BeNumerically(">", 5), "most refused rows pass the CRD schema")

	for i, row := range hostile.CopyTasks {
		task, ok := created[i]
		if !ok {
			continue
		}
		t.Run(row.Name, func(t *testing.T) {
			g := NewWithT(t)
			fld := row.Want.RefusedAt
			g.Eventually(status(task)).WithTimeout(timeout).WithPolling(poll).Should(And(
				haveCondition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionTrue, copybackupstask.ReasonInvalidSpec),
				haveCondition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionFalse, copybackupstask.ReasonInvalidSpec),
				HaveField("LastError", HaveValue(ContainSubstring(fld))),
				HaveField("ObservedGeneration", HaveValue(Equal(task.Generation))),
			))
			g.Eventually(func(g Gomega) []string {
				list := &corev1.EventList{}
				g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
				var messages []string
				for _, e := range list.Items {
					if e.InvolvedObject.Name == task.Name && e.Type == corev1.EventTypeWarning && e.Reason == copybackupstask.EventReasonInvalidSpec {
						messages = append(messages, e.Message)
					}
				}
				return messages
			}).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(ContainSubstring(fld)))
			g.Consistently(func() error {
				return env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: copybackupstask.WorkerJobName(task)}, &batchv1.Job{})
			}).WithTimeout(time.Second).WithPolling(poll).Should(Satisfy(apierrors.IsNotFound), "no worker Job")
		})
	}
}
