// Package lang fills the gaps between goja and the language agents write
// today (ES2021-ES2025): well-known symbols for `using`, Object.groupBy and
// Map.groupBy, Promise.withResolvers, the iterator helpers and Iterator,
// Array.fromAsync, WeakRef and FinalizationRegistry, and
// String.prototype.isWellFormed and toWellFormed. Each Install function is
// one family of the runtime's install-when-named table (runtime/globals.go),
// built with the Go API on the run's fresh VM before any user code runs; no
// source is evaluated. Behaviour follows Node 22 (runtime/testdata/nodediff).
package lang
