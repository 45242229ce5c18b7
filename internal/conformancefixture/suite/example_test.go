package suite_test

import (
	"fmt"

	"github.com/sandboxrt/sandbox/internal/conformancefixture/suite"
)

// Example shows how results read; suite.Run(t, url) returns them from a real
// run of the npm suite.
func Example() {
	results := suite.Results{
		"ping": {Name: "ping", Checks: []suite.Check{{ID: "ping", Name: "Ping", Status: "SUCCESS"}}},
		"tools-call-with-progress": {Name: "tools-call-with-progress", Checks: []suite.Check{
			{ID: "tools-call-with-progress", Name: "ToolsCallWithProgress", Status: "FAILURE", ErrorMessage: "Expected at least 3 progress notifications, got 2"},
		}},
	}
	fmt.Println(results.Passed())
	fmt.Print(results["tools-call-with-progress"].Failures())
	// Output:
	// [ping]
	// tools-call-with-progress: ToolsCallWithProgress: Expected at least 3 progress notifications, got 2
}
