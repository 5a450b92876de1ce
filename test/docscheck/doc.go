// Package docscheck holds checks that the operator documentation keeps up with the code: every condition
// reason, event reason and alert the project emits has a runbook entry in docs/operations.md, so that an
// operator paged at night by a name finds what it means and what to do.
package docscheck
