package backupvalidation

import (
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// MatchConditionName names the match condition that keeps objects of other provider types away from the
// extension.
const MatchConditionName = "handled-provider-type"

// judgedFormat is true for the object named by %[1]s when this extension judges it: its type is one of the
// list %[2]s, or it has no type (it belongs to nobody, and Handles judges it too). The has() guards keep the
// expression from failing on an object without spec or type: a failing match condition counts as a failed
// call, and the configuration fails closed. The chart renders the same format
// (templates/validatingwebhookconfiguration.yaml).
const judgedFormat = "!has(%[1]s.spec) || !has(%[1]s.spec.type) || %[1]s.spec.type == '' || %[1]s.spec.type in %[2]s"

// HandledTypeExpression is the CEL expression of the match condition: the object is of a type in
// providerTypes (or has none), or an update moves it away from one. The Handles filter inside the handler
// says the same, but the apiserver evaluates this before calling the webhook, so BackupEntries and
// BackupBuckets that another backup extension on the seed owns (aws, …) never depend on this extension
// being reachable: while it has no ready endpoint, gardenlet can still create and annotate them.
func HandledTypeExpression(providerTypes []string) string {
	if providerTypes == nil {
		providerTypes = []string{}
	}
	// A JSON array of strings is a CEL list literal, and Helm's toJson writes the same; a []string always marshals.
	list, _ := json.Marshal(providerTypes)
	return fmt.Sprintf("%s || (request.operation == 'UPDATE' && (%s))",
		fmt.Sprintf(judgedFormat, "object", list), fmt.Sprintf(judgedFormat, "oldObject", list))
}

// handledTypeConditions are the match conditions of both webhooks.
func handledTypeConditions(providerTypes []string) []admissionregistrationv1.MatchCondition {
	return []admissionregistrationv1.MatchCondition{{Name: MatchConditionName, Expression: HandledTypeExpression(providerTypes)}}
}
