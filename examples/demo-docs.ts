// Read the tracker's documents the way an agent researches a question, and
// see the gateway refuse a path that leaves the document store.
//   sandbox run examples/demo-docs.ts --config examples/mcp.json

// read_document answers plain text: a folder path lists documents, one per line.
const listing = (await demo.readDocument({ path: "specs/" })) as string;
const paths = listing.split("\n").filter((p) => p.endsWith(".md"));

const docs = await Promise.all(paths.map(async (path) => ({ path, text: (await demo.readDocument({ path })) as string })));

// Which specs mention a date, and what do they say about it?
const dated = docs.flatMap(({ path, text }) =>
  text.split("\n").filter((line) => /\d{4}-\d{2}-\d{2}/.test(line)).map((line) => `${path}: ${line.trim()}`),
);

let traversal: string;
try {
  await demo.readDocument({ path: "../../etc/passwd" });
  traversal = "read outside the document store (this should not happen)";
} catch (e) {
  // PATH_TRAVERSAL from the gateway; the server would refuse it too.
  traversal = e instanceof MCPToolError ? `${e.code}: refused` : String(e);
}

return { documents: paths.length, dated, traversal };
