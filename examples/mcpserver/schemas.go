package mcpserver

// The tools' JSON Schemas, written out in full rather than built with
// mcp-go's option helpers: these are what typegen turns into TypeScript and
// what the gateway validates against, so they should read like the schemas
// of a real, carefully described server (enums, defaults, formats, nested
// objects, arrays, required fields, output schemas).

const taskSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "string", "description": "Task id, e.g. T-101."},
    "project_id": {"type": "string", "description": "Id of the task's project."},
    "title": {"type": "string"},
    "status": {"type": "string", "enum": ["todo", "in_progress", "blocked", "done"]},
    "priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"]},
    "assignee": {"type": "string", "description": "Username; absent when unassigned."},
    "labels": {"type": "array", "items": {"type": "string"}},
    "due": {"type": "string", "format": "date", "description": "Due date (YYYY-MM-DD); absent when none."},
    "estimate_hours": {"type": "number"},
    "comments": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["id", "project_id", "title", "status", "priority", "labels"]
}`

const listProjectsInput = `{
  "type": "object",
  "properties": {
    "status": {
      "type": "string",
      "enum": ["active", "archived", "all"],
      "default": "active",
      "description": "Which projects to list."
    },
    "owner": {"type": "string", "description": "Only projects owned by this username, e.g. maria."}
  },
  "additionalProperties": false
}`

const getProjectInput = `{
  "type": "object",
  "properties": {
    "project_id": {"type": "string", "description": "Project id, e.g. PRJ-1 (see list_projects)."}
  },
  "required": ["project_id"],
  "additionalProperties": false
}`

const getProjectOutput = `{
  "type": "object",
  "properties": {
    "id": {"type": "string"},
    "name": {"type": "string"},
    "status": {"type": "string", "enum": ["active", "archived"]},
    "owner": {"type": "string"},
    "description": {"type": "string"},
    "members": {"type": "array", "items": {"type": "string"}},
    "task_counts": {
      "type": "object",
      "description": "Number of tasks per status.",
      "properties": {
        "todo": {"type": "integer"},
        "in_progress": {"type": "integer"},
        "blocked": {"type": "integer"},
        "done": {"type": "integer"}
      },
      "required": ["todo", "in_progress", "blocked", "done"]
    },
    "overdue_tasks": {"type": "array", "items": {"type": "string"}, "description": "Ids of open tasks due before today."},
    "milestones": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string"},
          "due": {"type": "string", "format": "date"},
          "done": {"type": "boolean"}
        },
        "required": ["name", "due", "done"]
      }
    }
  },
  "required": ["id", "name", "status", "owner", "description", "members", "task_counts", "overdue_tasks", "milestones"]
}`

const searchTasksInput = `{
  "type": "object",
  "properties": {
    "project_id": {"type": "string", "description": "Only tasks of this project, e.g. PRJ-2. Omit to search every project."},
    "query": {"type": "string", "description": "Words that must all appear in the title (case-insensitive)."},
    "filter": {
      "type": "object",
      "description": "Narrow the search; every given field must match.",
      "properties": {
        "status": {
          "type": "array",
          "items": {"type": "string", "enum": ["todo", "in_progress", "blocked", "done"]},
          "uniqueItems": true,
          "description": "Any of these statuses."
        },
        "assignee": {"type": "string", "description": "Username of the assignee."},
        "labels": {"type": "array", "items": {"type": "string"}, "description": "Tasks carrying all of these labels."},
        "due_before": {"type": "string", "format": "date", "description": "Only tasks due before this date (YYYY-MM-DD)."}
      },
      "additionalProperties": false
    },
    "sort": {"type": "string", "enum": ["due", "priority", "created"], "default": "due", "description": "Order of the results: earliest due first, most urgent first, or oldest first."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20, "description": "At most this many tasks."}
  },
  "additionalProperties": false
}`

const searchTasksOutput = `{
  "type": "object",
  "properties": {
    "total": {"type": "integer", "description": "How many tasks matched before the limit."},
    "tasks": {"type": "array", "items": ` + taskSchema + `}
  },
  "required": ["total", "tasks"]
}`

const createTaskInput = `{
  "type": "object",
  "properties": {
    "project_id": {"type": "string", "description": "Project to add the task to, e.g. PRJ-1. Archived projects take no new tasks."},
    "title": {"type": "string", "minLength": 1, "maxLength": 120, "description": "Short title, unique among the project's open tasks."},
    "priority": {"type": "string", "enum": ["low", "medium", "high", "urgent"], "default": "medium"},
    "assignee": {"type": "string", "description": "Username of a project member (see get_project)."},
    "labels": {"type": "array", "items": {"type": "string", "maxLength": 30}, "maxItems": 10, "default": []},
    "due": {"type": "string", "format": "date", "description": "Due date, YYYY-MM-DD, not in the past."},
    "estimate_hours": {"type": "number", "minimum": 0.5, "maximum": 200, "description": "Estimated effort in hours."}
  },
  "required": ["project_id", "title"],
  "additionalProperties": false
}`

const updateTaskStatusInput = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "description": "Task id, e.g. T-101."},
    "status": {"type": "string", "enum": ["todo", "in_progress", "blocked", "done"], "description": "New status. Done tasks cannot be reopened; blocked needs a comment."},
    "comment": {"type": "string", "maxLength": 500, "description": "Why the status changes; required when blocking."}
  },
  "required": ["task_id", "status"],
  "additionalProperties": false
}`

const deleteTaskInput = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "description": "Task id, e.g. T-106."}
  },
  "required": ["task_id"],
  "additionalProperties": false
}`

const readDocumentInput = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "description": "Path of a document relative to the document store, e.g. specs/mobile/sync-api.md. A folder path ending in / (or an empty path) lists the documents under it."
    }
  },
  "required": ["path"],
  "additionalProperties": false
}`

const teamWorkloadInput = `{
  "type": "object",
  "properties": {
    "project_id": {"type": "string", "description": "Only this project, e.g. PRJ-1. Omit for all active projects."}
  },
  "additionalProperties": false
}`
