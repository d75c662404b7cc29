// Package clients configures the controller's connections to the API
// server: the content type of the built-in kinds' clients, and clients of
// their own, with their own rate limit and timeout, for the leader lease
// and the readiness check.
package clients
