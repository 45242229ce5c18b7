// The reference sandbox of `make load-reference` (docs/performance.md): an
// MCP server on the official TypeScript SDK with one tool, execute_code,
// that runs each snippet in a fresh quickjs-emscripten runtime (the wasm
// sandbox other code-mode servers use) with the upstream's tools as async
// functions of a namespace (`demo.listProjects({})`), each call forwarded
// through the SDK's client to the upstream over stdio. Results reach the
// snippet as sandbox's do: structuredContent, else the text parsed as JSON
// when it is JSON, else the text. It is a yardstick, not a product: no
// authentication, one upstream, limits of time and memory only.
//
//   node quickjs-server.mjs PORT UPSTREAM_COMMAND [ARGS...]
//
// It prints "listening on http://127.0.0.1:PORT/mcp" once it serves.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getQuickJS } from "quickjs-emscripten";
import { z } from "zod";

const [port, command, ...args] = process.argv.slice(2);
const upstream = new Client({ name: "quickjs-reference", version: "1.0.0" });
// The upstream gets this process's environment (the SDK passes only a few
// variables by default): the benchmark's upstream is selected by one.
await upstream.connect(new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" }));
const tools = (await upstream.listTools()).tools.map((t) => ({ name: t.name, js: t.name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase()) }));
const QuickJS = await getQuickJS();

function decode(res) {
  if (res.structuredContent != null) return res.structuredContent;
  const blocks = res.content ?? [];
  if (blocks.length && blocks.every((b) => b.type === "text")) {
    const text = blocks.map((b) => b.text).join("\n");
    try { return JSON.parse(text); } catch { return text; }
  }
  return blocks.length ? blocks : null;
}

async function run(code, timeoutMs = 30000) {
  const rt = QuickJS.newRuntime();
  rt.setMemoryLimit(256 << 20);
  const deadline = Date.now() + timeoutMs;
  rt.setInterruptHandler(() => Date.now() > deadline);
  const vm = rt.newContext();
  try {
    const json = vm.getProp(vm.global, "JSON");
    const parse = vm.getProp(json, "parse");
    const toVM = (value) => {
      const s = vm.newString(JSON.stringify(value) ?? "null");
      const h = vm.unwrapResult(vm.callFunction(parse, json, s));
      s.dispose();
      return h;
    };
    const ns = vm.newObject();
    for (const t of tools) {
      const fn = vm.newFunction(t.js, (argsHandle) => {
        const callArgs = argsHandle ? vm.dump(argsHandle) : {};
        const d = vm.newPromise();
        upstream.callTool({ name: t.name, arguments: callArgs ?? {} }).then((res) => {
          if (!vm.alive) return;
          if (res.isError) {
            const e = vm.newError(JSON.stringify(res.content));
            d.reject(e);
            e.dispose();
          } else {
            const h = toVM(decode(res));
            d.resolve(h);
            h.dispose();
          }
        }, (err) => {
          if (!vm.alive) return;
          const e = vm.newError(String(err));
          d.reject(e);
          e.dispose();
        });
        d.settled.then(() => { if (vm.alive) rt.executePendingJobs(); });
        return d.handle;
      });
      vm.setProp(ns, t.js, fn);
      fn.dispose();
    }
    vm.setProp(vm.global, "demo", ns);
    ns.dispose();
    const promise = vm.unwrapResult(vm.evalCode(`(async () => {\n${code}\n})()`));
    const settled = vm.resolvePromise(promise);
    promise.dispose();
    rt.executePendingJobs();
    const result = await Promise.race([settled, new Promise((r) => setTimeout(() => r(null), timeoutMs))]);
    if (result == null) return { ok: false, error: "time limit" };
    if (result.error) {
      const err = vm.dump(result.error);
      result.error.dispose();
      return { ok: false, error: err };
    }
    const value = vm.dump(result.value);
    result.value.dispose();
    json.dispose();
    parse.dispose();
    return { ok: true, value };
  } finally {
    vm.dispose();
    rt.dispose();
  }
}

function newServer() {
  const server = new McpServer({ name: "quickjs-reference", version: "1.0.0" });
  server.registerTool("execute_code", { description: "Run JavaScript in quickjs-emscripten", inputSchema: { code: z.string() } }, async ({ code }) => {
    const out = await run(code);
    return { content: [{ type: "text", text: JSON.stringify(out) }], isError: !out.ok };
  });
  return server;
}

const transports = new Map();
const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  const sid = req.headers["mcp-session-id"];
  let transport = sid && transports.get(sid);
  if (!transport) {
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => transports.set(id, transport) });
    transport.onclose = () => transports.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
httpServer.listen(Number(port), "127.0.0.1", () => {
  process.stderr.write(`listening on http://127.0.0.1:${httpServer.address().port}/mcp\n`);
});
