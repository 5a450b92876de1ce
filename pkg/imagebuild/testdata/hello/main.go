// Command hello is the smallest binary imagebuild's tests put into an image.
package main

import "fmt"

func main() { fmt.Println("hello") }
