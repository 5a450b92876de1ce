// Command extra is a binary of a module of its own, which imagebuild's tests add to an image as an Extra
// (like the old etcd servers of hack/tools in the etcd-wrapper image).
package main

import "fmt"

func main() { fmt.Println("extra") }
