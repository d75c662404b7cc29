// Package leaderelection runs the controller's work while it holds the
// leader lease, and ends it, cancelling the syncs in flight, as soon as the
// lease is lost.
package leaderelection
