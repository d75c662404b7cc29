// Command etcd is etcd's server built from the tools module.
//
// go.etcd.io/etcd/server/v3 has replace directives in its go.mod, so
// `go install go.etcd.io/etcd/server/v3@vX` refuses it; building this tiny
// main inside the tools module works and resolves etcd together with the
// Kubernetes version the cluster uses.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
