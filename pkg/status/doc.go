// Package status decides a DeployObject's status from what a sync of its
// children found (Outcome): the Ready, Reconciling and Stalled conditions,
// one condition per optional child, the addresses the application is
// reached at, and whether anything changed, so that an unchanged world
// costs no write. It also remembers the status writes the informer cache
// has not shown yet (written.go).
package status
