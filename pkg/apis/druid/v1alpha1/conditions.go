package v1alpha1

// FindCondition returns the condition of type t in conditions, or nil. Druid, the Gardener side and the
// tests all read conditions of Etcd and EtcdCopyBackupsTask status this way.
func FindCondition(conditions []Condition, t ConditionType) *Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}
