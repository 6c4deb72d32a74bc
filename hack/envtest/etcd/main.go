// Command etcd is the etcd server used by almanac's integration tests, `make demo` and hack/cluster.sh.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
