// Package gitops tests how GitOps tools read DeployObjects: the Argo CD
// health check in deploy/argocd and Flux's status library (kstatus), on
// fixtures that test/e2e captured from the controller. It is a module of its
// own so that those tools' dependencies, which pull newer k8s.io libraries,
// stay out of the controller's go.mod.
package gitops
