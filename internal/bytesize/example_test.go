package bytesize_test

import (
	"fmt"

	"github.com/sandboxrt/sandbox/internal/bytesize"
)

func Example() {
	n, _ := bytesize.Parse("0.25GiB")
	fmt.Println(n, bytesize.Format(n))
	// Output: 268435456 256MiB
}
