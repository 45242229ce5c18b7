// Package vectorindex picks the few tools of a catalog that an intent needs:
// an embedded, offline hybrid search (BM25 over the tools' names,
// descriptions and parameters, WordNet query expansion, and chromem-go
// vectors from a built-in embedder or an optional remote one), persisted on
// disk so that a restart re-embeds only the tools that changed.
//
//	ix, _ := vectorindex.New(vectorindex.Options{Dir: indexDir})
//	_, _ = ix.Sync(ctx, tools)                       // diffed by definition hash
//	hits, _ := ix.Search(ctx, "list open pull requests", 5) // best first
//
// docs/vectorindex.md says how a search works and what each part bought.
package vectorindex
