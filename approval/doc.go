// Package approval decides whether a tool call may run: the policy (modes,
// per-tool rules, remembered "always" answers, conditional defaults) and the
// small interface through which a person is asked.
//
// The policy never asks anybody itself. It answers Auto, Ask or Deny with a
// reason for the log; the caller asks through an Approver when the answer is
// Ask.
package approval
