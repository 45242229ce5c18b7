package typegen_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandboxrt/sandbox/typegen"
)

// Name the whole catalog once, then declare any subset of it (here, the one
// tool a search picked) with the catalog's names; the bindings route calls
// back with the same Names.
func Example() {
	catalog := []typegen.Tool{
		{
			Server:      "github",
			Name:        "list_commits",
			Description: "List commits of a branch.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{
				"owner":{"type":"string"},
				"repo":{"type":"string"},
				"perPage":{"type":"integer","description":"Results per page (max 100)"}},
				"required":["owner","repo"]}`),
			Annotations: &typegen.Annotations{ReadOnlyHint: ptr(true)},
		},
		{Server: "github", Name: "delete", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	names := typegen.AssignNames(catalog)
	cache := typegen.NewCache(0)

	out, err := typegen.Generate(catalog[:1], typegen.Options{Names: names, Cache: cache})
	if err != nil {
		panic(err)
	}
	fmt.Print(strings.TrimPrefix(out.DTS, typegen.Preamble))

	b, _ := names.Resolve("github", "delete_") // "delete" is a reserved word
	fmt.Println(b.ID)
	// Output:
	// declare namespace github {
	// 	/** List commits of a branch. @readOnly */
	// 	function listCommits(input: {
	// 		owner: string;
	// 		repo: string;
	// 		/** Results per page (max 100) @integer */ perPage?: number;
	// 	}): Promise<ToolResult>;
	// }
	// github:delete
}

func ptr[T any](v T) *T { return &v }
