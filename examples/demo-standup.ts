// Stand-up report across every active project of the demo tracker
// (examples/mcpserver, configured as "demo" in examples/mcp.json):
//   sandbox run examples/demo-standup.ts --config examples/mcp.json
// The calls of each step run concurrently with Promise.all; only the
// summary below comes back, not the raw tool results.

interface ProjectRow { id: string; name: string; owner: string; open_tasks: number }

// list_projects has no output schema: its JSON text arrives parsed.
const projects = (await demo.listProjects({ status: "active" })) as unknown as ProjectRow[];

const [details, blocked, dueSoon] = await Promise.all([
  Promise.all(projects.map((p) => demo.getProject({ project_id: p.id }))),
  demo.searchTasks({ filter: { status: ["blocked"] }, sort: "priority" }),
  demo.searchTasks({ filter: { status: ["todo", "in_progress"], due_before: "2026-03-10" } }),
]);

console.log(`${projects.length} active projects, ${blocked.total} blocked tasks`);

return {
  projects: details.map((d) => ({
    project: `${d.id} ${d.name}`,
    open: d.task_counts.todo + d.task_counts.in_progress + d.task_counts.blocked,
    overdue: d.overdue_tasks,
    nextMilestone: d.milestones.find((m) => !m.done)?.name ?? null,
  })),
  blocked: blocked.tasks.map((t) => `${t.id} ${t.title} (${t.assignee ?? "unassigned"}): ${t.comments?.at(-1) ?? "no reason given"}`),
  dueSoon: dueSoon.tasks.map((t) => `${t.id} due ${t.due}`),
};
