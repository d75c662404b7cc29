// Command install-crd applies the CRDs in a directory and waits until the
// API server serves them. Used by `make run` and `make install`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"deployobject.dev/controller/test/crdinstall"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "Path to the kubeconfig of the cluster.")
	dir := flag.String("dir", "crd", "Directory holding the CRD YAML files.")
	timeout := flag.Duration("timeout", 60*time.Second, "How long to wait for the CRDs to be Established.")
	flag.Parse()

	if err := install(*kubeconfig, *dir, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "install-crd:", err)
		os.Exit(1)
	}
	fmt.Println("CRDs in", *dir, "are Established")
}

// install applies the CRDs of dir and waits for them; apart from main, so
// that the context is cancelled before the process exits.
func install(kubeconfig, dir string, timeout time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return crdinstall.Install(ctx, cfg, dir)
}
