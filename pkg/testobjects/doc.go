// Package testobjects builds the DeployObjects, and the children as the API
// server would store them, that the tests of several packages share. It is
// imported only by tests.
package testobjects
