// Triage with error handling: every tool error is an MCPToolError with a
// code, caught like any exception.
//   sandbox run examples/demo-triage.ts --config examples/mcp.json
// - the gateway refuses input that breaks the tool's schema before calling
//   the server (VALIDATION_FAILED, with help text on how to call the tool);
// - the tracker itself refuses what its rules forbid (an archived project),
//   which arrives as TOOL_ERROR carrying the server's explanation.

const problems: { code: string; message: string }[] = [];

async function attempt<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (e) {
    if (!(e instanceof MCPToolError)) throw e;
    problems.push({ code: e.code, message: e.message.split("\n")[0] });
    return undefined;
  }
}

// "critical" is not one of the priority enum's values: VALIDATION_FAILED.
// (The cast only keeps tsc quiet: at run time types are not checked, the gateway checks the schema.)
await attempt(() => demo.createTask({ project_id: "PRJ-1", title: "Fix checkout timeout", priority: "critical" as "urgent" }));

// PRJ-3 is archived: the tracker answers isError, so TOOL_ERROR.
const archived = await attempt(() => demo.createTask({ project_id: "PRJ-3", title: "Refund duplicate invoices" }));

// Fall back to an active project, then work the new task.
const task = archived ?? (await demo.createTask({
  project_id: "PRJ-1",
  title: "Fix checkout timeout",
  priority: "urgent",
  assignee: "li",
  labels: ["checkout", "bug"],
  due: "2026-03-04",
}));
const started = await demo.updateTaskStatus({ task_id: task.id, status: "in_progress", comment: "Reproduced on staging" });

// A done task cannot be reopened: caught, then recorded.
await attempt(() => demo.updateTaskStatus({ task_id: "T-105", status: "todo" }));

return { created: task.id, status: started.status, problems };
