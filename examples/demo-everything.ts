// Two servers in one snippet: the demo tracker (examples/mcpserver) and the
// reference server @modelcontextprotocol/server-everything from npm.
//   sandbox run examples/demo-everything.ts --config <a config with "demo" and "everything">
// Calls to both servers run concurrently; structured results are typed.

const [open, weather] = await Promise.all([
  demo.searchTasks({ filter: { status: ["todo", "in_progress", "blocked"] }, sort: "priority", limit: 100 }),
  everything.getStructuredContent({ location: "Chicago" }),
]);

const hours = open.tasks.reduce((sum, t) => sum + (t.estimate_hours ?? 0), 0);
const note = `${open.total} open tasks (${hours} h estimated); offsite in Chicago: ${weather.temperature}°C, ${weather.conditions}`;

// echo has no output schema: its text comes back as a string.
const echoed = (await everything.echo({ message: note })) as string;

return {
  note,
  echoed,
  mostUrgent: open.tasks.slice(0, 3).map((t) => `${t.id} [${t.priority}] ${t.title}`),
  indoorPlanB: weather.conditions.toLowerCase().includes("rain"),
};
