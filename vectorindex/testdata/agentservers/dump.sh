#!/bin/sh
# Regenerates tools.json: the tools an agent meets behind `sandbox serve` with
# the example tracker, server-filesystem, server-memory and server-everything
# (the npm peers pinned in peers/package-lock.json), as the gateway lists them
# (server-everything shows 17 tools, since the gateway advertises sampling,
# elicitation and roots upstream), plus the SQLite server's 6 tools from the
# tool corpus under the server name "db". Run from the repository root after
# `make peers`: sh vectorindex/testdata/agentservers/dump.sh
set -eu
root=$(pwd)
peers=$root/peers/node_modules
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/files"
go build -o "$tmp/sandbox" ./cmd/sandbox
go build -o "$tmp/example-mcpserver" ./examples/mcpserver/cmd/example-mcpserver
cat >"$tmp/mcp.json" <<JSON
{
  "mcpServers": {
    "tracker": {"command": "$tmp/example-mcpserver"},
    "files": {"command": "node", "args": ["$peers/@modelcontextprotocol/server-filesystem/dist/index.js", "$tmp/files"]},
    "memory": {"command": "node", "args": ["$peers/@modelcontextprotocol/server-memory/dist/index.js"], "env": {"MEMORY_FILE_PATH": "$tmp/memory.jsonl"}},
    "everything": {"command": "node", "args": ["$peers/@modelcontextprotocol/server-everything/dist/index.js", "stdio"]}
  }
}
JSON
# mcp-inspector's CLI takes a command without arguments of its own flags' kind
printf '#!/bin/sh\nexec "%s/sandbox" serve -c "%s/mcp.json" --expose all --code-mode=false --log-level error\n' "$tmp" "$tmp" >"$tmp/serve.sh"
chmod +x "$tmp/serve.sh"
"$peers/.bin/mcp-inspector" --cli "$tmp/serve.sh" --method tools/list >"$tmp/list.json"
# the servers' instructions, as the gateway keeps them (code mode indexes them with each tool)
"$tmp/sandbox" servers -c "$tmp/mcp.json" --json --log-level error >"$tmp/servers.json"
node - "$tmp/list.json" "$root/testdata/toolcorpus/tools.json" "$tmp/servers.json" >"$root/vectorindex/testdata/agentservers/tools.json" <<'JS'
const fs = require("fs");
const [list, corpus, servers] = process.argv.slice(2).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
const about = Object.fromEntries(servers.map((s) => [s.name, s.instructions]));
const out = [];
for (const t of list.tools) {
  const i = t.name.indexOf("__");
  const server = t.name.slice(0, i);
  if (server === "gateway") continue; // the hub tools of serve itself
  const e = { server, name: t.name.slice(i + 2) };
  for (const k of ["title", "description", "inputSchema", "outputSchema", "annotations"]) if (t[k] !== undefined) e[k] = t[k];
  if (about[server]) e.serverInstructions = about[server];
  out.push(e);
}
for (const t of corpus) if (t.server === "sqlite") out.push({ ...t, server: "db" });
out.sort((a, b) => (a.server + ":" + a.name < b.server + ":" + b.name ? -1 : 1));
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
JS
