// Package options holds the controller's command-line flags, their
// defaults (including those of the configuration rollouts and the pod
// security profile, whose meaning pkg/configrollout and pkg/children own),
// validation and --help. Like the other process packages it imports no
// domain package: main hands the values on.
package options
