// Package heal is what the Etcd controller does about a cluster's health after the status flow observed
// it: Run takes the observation and the status derived from it (Input), applies the decision table
// (package heal/decide) and returns what its actions changed (Outcome) for the controller's status write.
//
// The actions: delete the pods of a minority of members that stayed NotReady (actions.go); bootstrap a
// cluster that lost its quorum again from the backup, in six steps over several runs (quorumrecovery.go),
// after saving what the member volumes hold beyond the backup (survivingdata.go, survivingdatajob.go);
// complete scale-downs and remove superfluous members; relocate a member whose volume is bound to lost
// nodes (relocation.go); say in the QuorumLossRecovery condition why a
// quorum loss is not acted on. Destructive actions are decided again on what the apiserver stores
// (confirm.go). Step 6 of the recovery, FinishQuorumLossRecovery, runs only after the status saying that
// step 5 completed is written.
//
// Not to be confused with package health, which turns the observation into the status and conditions.
package heal
