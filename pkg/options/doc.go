// Package options holds the controller's command-line flags, their
// defaults, validation and --help.
package options
