package typegen

import (
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sandboxrt/sandbox/internal/testpeers"
)

// corpusTools reads the repository's copy of the 341-tool corpus.
func corpusTools(t testing.TB) []Tool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testpeers.RepoRoot(t), "testdata", "toolcorpus", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := ReadTools(data, "")
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func goldenTools(t *testing.T, name string) []Tool { return goldenToolsTB(t, name) }

func goldenToolsTB(t testing.TB, name string) []Tool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := ReadTools(data, "")
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// Usage snippets, type-checked against the corpus declarations the way the
// runtime runs agent code: the body of an async function.
var passingSnippets = map[string]string{
	"call_required_only": `await github.listCommits({ owner: "o", repo: "r" });`,
	"call_all_fields":    `await github.listCommits({ owner: "o", repo: "r", perPage: 10, page: 2, sha: "main", fields: ["sha", "html_url"] });`,
	"call_enum":          `await github.listIssues({ owner: "o", repo: "r", state: "OPEN", orderBy: "CREATED_AT", direction: "DESC" });`,
	"call_no_args":       `await github.getMe(); await github.getMe({});`,
	"call_renamed_ns":    `await fetch_.fetch({ url: "https://example.com" }); await googleMaps.mapsGeocode({ address: "Paris" });`,
	"call_refs":          `await notion.apiPostPage({ parent: { page_id: "x" }, properties: {} });`,
	"narrow_result": `
		const r = await time.getCurrentTime({ timezone: "UTC" });
		if (typeof r === "string") console.log(r.toUpperCase());
		else if (Array.isArray(r)) console.log(r.length);
		else if (r !== null && typeof r === "object") console.log(Object.keys(r));
		const blocks = (await filesystem.readMediaFile({ path: "/a.png" })) as ContentBlock[];
		for (const b of blocks) if (b.type === "image") console.log(b.mimeType);`,
	"handle_result": `
		const big = await github.listCommits({ owner: "o", repo: "r" });
		if (big !== null && typeof big === "object" && !Array.isArray(big) && "handle" in big) {
			const h: SandboxResultHandle = big as SandboxResultHandle;
			console.log(h.handle, h.bytes, h.preview.length, h.note);
		}`,
	"catch_error": `
		try { await github.getMe(); } catch (e) {
			if (e instanceof MCPToolError) { const c: string = e.code; const t: string = e.tool; console.log(c, t, e.message, e.data); }
		}`,
	"output_schema": `
		const w = await output.getWeather({ city: "Oslo" });
		const t: number = w.temperature;
		const c: "sunny" | "cloudy" | "rain" = w.conditions;
		for (const d of w.forecast ?? []) console.log(d.date, d.high);
		const n: number = (await output.count()).count;`,
	"parallel": `
		const [a, b] = await Promise.all([github.getMe(), memory.readGraph()]);
		console.log(a, b);`,
}

var failingSnippets = map[string]struct {
	code, want string // the snippet and the TypeScript error code it must produce
}{
	"missing_required":  {`await github.listCommits({ repo: "r" });`, "TS2741"},
	"wrong_enum_value":  {`await github.listIssues({ owner: "o", repo: "r", state: "pending" });`, "TS2322"},
	"wrong_enum_case":   {`await github.listIssues({ owner: "o", repo: "r", state: "open" });`, "TS2820"},
	"wrong_type":        {`await filesystem.readTextFile({ path: 42 });`, "TS2322"},
	"typo_property":     {`await github.listCommits({ owner: "o", repo: "r", perpage: 5 });`, "TS2561"},
	"unknown_tool":      {`await github.noSuchTool({});`, "TS2339"},
	"unknown_namespace": {`await nosuchserver.tool({});`, "TS2304"},
	"unnarrowed_result": {`const me = await github.getMe(); console.log(me.login);`, "TS2339"},
	"wrong_output_use":  {`const w = await output.getWeather({ city: "Oslo" }); console.log(w.humidity);`, "TS2339"},
	"missing_input":     {`await github.listCommits();`, "TS2554"},
	"wrong_array_item":  {`await github.listCommits({ owner: "o", repo: "r", fields: ["nope"] });`, "TS2322"},
}

// TestCorpusCompiles turns the whole 341-tool corpus into one .d.ts, checks it
// with the real tsc --strict, and checks usage snippets against it: correct
// calls compile, and each kind of wrong call fails with the expected error.
func TestCorpusCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tsc")
	}
	tools := append(corpusTools(t), goldenTools(t, "output")...)
	out, err := Generate(tools, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != len(tools) {
		t.Errorf("declared %d of %d tools", len(out.Tools), len(tools))
	}
	for _, p := range out.Problems {
		t.Errorf("unexpected problem in the real corpus: %s", p)
	}
	files := map[string]string{"corpus.d.ts": out.DTS}
	for name, src := range passingSnippets {
		files["pass_"+name+".ts"] = wrapSnippet(src)
	}
	for name, s := range failingSnippets {
		files["fail_"+name+".ts"] = wrapSnippet(s.code)
	}
	diags := tscDiagnostics(t, files)
	if d := diags["corpus.d.ts"]; len(d) > 0 {
		t.Fatalf("tsc rejects the corpus declarations:\n%s", strings.Join(d, "\n"))
	}
	for name := range passingSnippets {
		if d := diags["pass_"+name+".ts"]; len(d) > 0 {
			t.Errorf("snippet %s should compile:\n%s", name, strings.Join(d, "\n"))
		}
	}
	for name, s := range failingSnippets {
		d := diags["fail_"+name+".ts"]
		if !strings.Contains(strings.Join(d, "\n"), s.want) {
			t.Errorf("snippet %s should fail with %s, got:\n%s", name, s.want, strings.Join(d, "\n"))
		}
	}
}

// wrapSnippet wraps agent code the way the runtime does (top-level await and
// return work inside an async function); the file stays a global script.
func wrapSnippet(code string) string {
	return "(async () => {\n" + code + "\n})();\n"
}

// TestReservedGlobalsCoverTypeScriptLib checks reservedGlobals against the
// global values declared by the installed TypeScript's lib files, so that a
// TypeScript upgrade that adds a global cannot silently let a server take its
// name as a namespace.
func TestReservedGlobalsCoverTypeScriptLib(t *testing.T) {
	libs, _ := filepath.Glob(filepath.Join(testpeers.NodeModules(t), "@typescript", "*", "lib", "lib.*.d.ts"))
	if len(libs) == 0 {
		testpeers.Package(t, "@typescript/typescript-linux-x64") // skips or fails with the install hint
		t.Fatal("no TypeScript lib files found")
	}
	decl := regexp.MustCompile(`(?m)^\s*declare (?:var|let|const|function|namespace|class|enum|module) ([a-z_][A-Za-z0-9_$]*)`)
	var missing []string
	for _, lib := range libs {
		data, err := os.ReadFile(lib)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
			if !reservedGlobals[m[1]] {
				missing = append(missing, m[1]+" ("+filepath.Base(lib)+")")
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("globals missing from reservedGlobals (add them to reserved.go): %s", strings.Join(missing, ", "))
	}
}

// TestGlobalsCompile proves Globals with GlobalsLib and no DOM is what a
// snippet can use: code using every declared global compiles, and the
// names left out on purpose are errors.
func TestGlobalsCompile(t *testing.T) {
	testpeers.Node(t)
	uses := `async function snippet() {
	const u = new URL("/a?b=1", "https://example.com");
	u.searchParams.set("c", "2");
	const q = new URLSearchParams({ x: "1" });
	const bytes = new TextEncoder().encode("hi");
	const text = new TextDecoder().decode(bytes);
	const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
	const id: string = crypto.randomUUID();
	crypto.getRandomValues(new Uint32Array(4));
	const t0 = performance.now();
	const ctl = new AbortController();
	ctl.signal.addEventListener("abort", () => console.log("aborted"));
	AbortSignal.timeout(10).throwIfAborted();
	const copy = structuredClone({ m: new Map([["a", 1]]) });
	const when = new Intl.DateTimeFormat("de-DE", { dateStyle: "full", timeZone: "UTC" }).format(new Date());
	const plural = new Intl.PluralRules("en-US").select(2);
	const list = new Intl.ListFormat("en", { type: "conjunction" }).format(["a", "b"]);
	const evens = [1, 2, 3, 4].values().filter((n) => n % 2 === 0).map((n) => n * 10).toArray();
	const all = await Array.fromAsync((async function* () { yield 1; })());
	const both = new Set([1]).union(new Set([2]));
	const ok = "x".isWellFormed() && /[\p{L}--[a-z]]/v.test("A");
	const id2 = setTimeout(() => {}, 1); clearTimeout(id2);
	queueMicrotask(() => {});
	await sandbox.store.set("seen", { n: 1 }, { ttlSeconds: 60, scope: "principal" });
	const seen = await sandbox.store.get<{ n: number }>("seen");
	const gone: boolean = await sandbox.store.delete("seen");
	const keys: string[] = await sandbox.store.keys("s");
	const part = await sandbox.results.json<{ id: number }>("res_x", "items.0");
	const chunk: string = await sandbox.results.read("res_x", { offset: 0, length: 100 });
	const fileText: string = await sandbox.results.read("res_x", { path: "content", offset: 100 });
	const lines: string[] = await sandbox.results.lines("res_x", { path: "content", from: 10, count: 5 });
	return { seen: seen?.n, gone, keys, part, chunk, fileText, lines, u: u.href, q: q.toString(), text, hash, id, t0, copy, when, plural, list, evens, all, both, ok, b: btoa(atob("aGk=")) };
}
`
	missing := map[string]string{
		"fetch.ts":    `async function f() { return fetch("https://example.com"); }`,
		"document.ts": `function f() { return document.title; }`,
		"process.ts":  `function f() { return process.env.HOME; }`,
		"require.ts":  `function f() { return require("fs"); }`,
	}
	tsc := testpeers.Bin(t, "tsc")
	check := func(name, src string) string {
		dir := t.TempDir()
		for file, text := range map[string]string{"globals.d.ts": Globals, name: src} {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(tsc, "--noEmit", "--strict", "--pretty", "false", "--target", "es2024", "--types", "",
			"--lib", strings.Join(GlobalsLib, ","), "globals.d.ts", name)
		cmd.Dir = dir
		cmd.Env = testpeers.Env(t)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := check("uses.ts", uses); out != "" {
		t.Fatalf("a snippet using the declared globals does not compile:\n%s", out)
	}
	for name, src := range missing {
		if out := check(name, src); !strings.Contains(out, "Cannot find name '"+strings.TrimSuffix(name, ".ts")+"'") {
			t.Errorf("%s: want tsc's \"Cannot find name\", got:\n%s", name, out)
		}
	}
}

// TestRankedCompiles: the corpus tools the usage snippets call, declared in
// a shuffled order (Options.Ranked: a namespace opened many times, tools'
// own namespaces of types among them), compile, and so do the snippets.
func TestRankedCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tsc")
	}
	all := append(corpusTools(t), goldenTools(t, "output")...)
	names := AssignNames(all)
	used := map[string]bool{"github": true, "fetch": true, "google-maps": true, "notion": true, "time": true, "filesystem": true, "memory": true, "output": true}
	var tools []Tool
	for _, tool := range all {
		if used[tool.Server] {
			tools = append(tools, tool)
		}
	}
	r := rand.New(rand.NewSource(7))
	r.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
	out, err := Generate(tools, Options{Names: names, Ranked: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.DTS, "declare namespace github {"); n < 2 {
		t.Fatalf("the shuffle opened github %d times; the test needs interleaved namespaces", n)
	}
	files := map[string]string{"ranked.d.ts": out.DTS}
	for name, src := range passingSnippets {
		files["pass_"+name+".ts"] = wrapSnippet(src)
	}
	requireCompiles(t, files)
}
