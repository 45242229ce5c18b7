package typegen

// GlobalsLib is the TypeScript standard library a snippet has: the language
// up to ES2024 with the ES2025 collection, iterator and Intl additions and
// Array.fromAsync. The DOM and Node's types are not in it; Globals declares
// the few web globals the sandbox adds.
var GlobalsLib = []string{"es2024", "es2025.collection", "es2025.iterator", "es2025.intl", "esnext.array"}

// Globals declares the globals the sandbox adds to the language, exactly as
// the runtime implements them (the families of runtime/globals.go, listed by
// runtime.Globals; a runtime test keeps the two in step). With
// GlobalsLib and no DOM, tsc accepts what a snippet can use and reports
// "Cannot find name" for what it cannot: fetch (there is no network: outside
// systems are reached through tools), document, window, process, require,
// Buffer. SharedArrayBuffer and Atomics are in the ES library but not in the
// sandbox. Timers run only within the run.
const Globals = `// The globals a sandbox snippet has beyond the language. Compile with
// lib: ["es2024", "es2025.collection", "es2025.iterator", "es2025.intl", "esnext.array"]
// and no DOM. Not here on purpose: fetch (no network: call tools), document, window,
// process, require, Buffer, SharedArrayBuffer, Atomics.

interface Console {
	log(...data: unknown[]): void;
	info(...data: unknown[]): void;
	warn(...data: unknown[]): void;
	error(...data: unknown[]): void;
	debug(...data: unknown[]): void;
}
declare var console: Console;

/** Timers run within the run: a timer still pending when the snippet's result is ready is dropped. */
declare function setTimeout(handler: (...args: any[]) => void, timeout?: number, ...args: any[]): number;
declare function clearTimeout(id: number | undefined): void;
declare function setInterval(handler: (...args: any[]) => void, timeout?: number, ...args: any[]): number;
declare function clearInterval(id: number | undefined): void;
declare function queueMicrotask(callback: () => void): void;

declare function atob(data: string): string;
declare function btoa(data: string): string;
declare function structuredClone<T = any>(value: T): T;

interface URLSearchParams {
	readonly size: number;
	append(name: string, value: string): void;
	delete(name: string, value?: string): void;
	get(name: string): string | null;
	getAll(name: string): string[];
	has(name: string, value?: string): boolean;
	set(name: string, value: string): void;
	sort(): void;
	toString(): string;
	forEach(callbackfn: (value: string, key: string, parent: URLSearchParams) => void, thisArg?: any): void;
	entries(): IterableIterator<[string, string]>;
	keys(): IterableIterator<string>;
	values(): IterableIterator<string>;
	[Symbol.iterator](): IterableIterator<[string, string]>;
}
declare var URLSearchParams: {
	prototype: URLSearchParams;
	new (init?: string[][] | Record<string, string> | string | URLSearchParams): URLSearchParams;
};

interface URL {
	hash: string;
	host: string;
	hostname: string;
	href: string;
	readonly origin: string;
	password: string;
	pathname: string;
	port: string;
	protocol: string;
	search: string;
	readonly searchParams: URLSearchParams;
	username: string;
	toString(): string;
	toJSON(): string;
}
declare var URL: {
	prototype: URL;
	/** Throws a TypeError for an invalid URL. */
	new (url: string | URL, base?: string | URL): URL;
	canParse(url: string | URL, base?: string | URL): boolean;
};

interface TextEncoder {
	readonly encoding: "utf-8";
	encode(input?: string): Uint8Array;
}
declare var TextEncoder: { prototype: TextEncoder; new (): TextEncoder };
interface TextDecoder {
	readonly encoding: string;
	readonly fatal: boolean;
	readonly ignoreBOM: boolean;
	decode(input?: ArrayBuffer | ArrayBufferView, options?: { stream?: boolean }): string;
}
declare var TextDecoder: {
	prototype: TextDecoder;
	/** UTF-8 only. */
	new (label?: "utf-8" | "utf8", options?: { fatal?: boolean; ignoreBOM?: boolean }): TextDecoder;
};

interface SubtleCrypto {
	digest(algorithm: "SHA-1" | "SHA-256" | "SHA-384" | "SHA-512" | { name: "SHA-1" | "SHA-256" | "SHA-384" | "SHA-512" }, data: ArrayBuffer | ArrayBufferView): Promise<ArrayBuffer>;
}
interface Crypto {
	readonly subtle: SubtleCrypto;
	/** Throws a QuotaExceededError past 65,536 bytes. */
	getRandomValues<T extends Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array>(array: T): T;
	randomUUID(): string;
}
declare var crypto: Crypto;

interface Performance {
	readonly timeOrigin: number;
	now(): number;
}
declare var performance: Performance;

interface AbortSignal {
	readonly aborted: boolean;
	readonly reason: any;
	onabort: ((ev: { type: "abort"; target: AbortSignal }) => any) | null;
	throwIfAborted(): void;
	addEventListener(type: "abort", listener: (ev: { type: "abort"; target: AbortSignal }) => any, options?: { once?: boolean }): void;
	removeEventListener(type: "abort", listener: (ev: { type: "abort"; target: AbortSignal }) => any): void;
}
declare var AbortSignal: {
	prototype: AbortSignal;
	abort(reason?: any): AbortSignal;
	/** Aborts after milliseconds of the run's time with a TimeoutError. */
	timeout(milliseconds: number): AbortSignal;
	any(signals: AbortSignal[]): AbortSignal;
};
interface AbortController {
	readonly signal: AbortSignal;
	abort(reason?: any): void;
}
declare var AbortController: { prototype: AbortController; new (): AbortController };

/** A JSON value, as sandbox.store keeps it. */
type SandboxJson = string | number | boolean | null | SandboxJson[] | { [key: string]: SandboxJson };
interface SandboxStoreOptions {
	/** "session" (the default): this session's values; "principal": the caller's own, across sessions. */
	scope?: "session" | "principal";
}
/**
 * JSON values kept between runs. Set without ttlSeconds, a session's values last a day. A value is
 * at most 1 MiB of JSON; a caller keeps at most 10,000 keys and 16 MiB in all. Each call counts as a
 * tool call.
 */
interface SandboxStore {
	/** The value, or null when the key has none (or it expired). */
	get<T = SandboxJson>(key: string, options?: SandboxStoreOptions): Promise<T | null>;
	/** Rejects with an MCPToolError of code STORE_LIMIT when a limit would be passed. */
	set(key: string, value: SandboxJson, options?: SandboxStoreOptions & { ttlSeconds?: number }): Promise<null>;
	/** Whether the key had a value. */
	delete(key: string, options?: SandboxStoreOptions): Promise<boolean>;
	/** The keys that start with prefix, sorted (at most 1,000). */
	keys(prefix?: string, options?: SandboxStoreOptions): Promise<string[]>;
}
/**
 * What a tool call resolves to instead of its result when the result is larger than what is left of
 * the run's budget of tool results (a quarter of its memory limit, at most 32 MiB): read it in parts.
 */
interface SandboxResultHandle {
	handle: string;
	/** The size of the whole result, as JSON text. */
	bytes: number;
	/** Its first kilobyte. */
	preview: string;
	/** The tool that gave it, "server:tool". */
	tool: string;
	/** How to read it, with a path into its start. */
	note: string;
}
/**
 * Parts of a result too large to hand over whole. A path is "items.0.name" or "/items/0/name" ("" the
 * whole); it goes into a string whose text is JSON (a file read as text) as into that JSON. Each answer
 * counts against the run's budget of tool results.
 */
interface SandboxResults {
	/** The value at path, or a handle to it when that is still too large. */
	json<T = SandboxJson>(handle: string, path?: string): Promise<T | SandboxResultHandle>;
	/**
	 * Text of the value at path (the whole by default): a string's own text, any other value's JSON
	 * text; length bytes (at most 1 MiB) from offset; "" past its end.
	 */
	read(handle: string, options?: { path?: string; offset?: number; length?: number }): Promise<string>;
	/**
	 * Lines of that text without their line ends: count of them (1,000 by default, at most 10,000, fewer
	 * when they would pass 1 MiB) from line from (0 the first); [] past the end. A line over 1 MiB rejects
	 * with RESULT_TOO_LARGE saying where it starts, to read it by bytes.
	 */
	lines(handle: string, options?: { path?: string; from?: number; count?: number }): Promise<string[]>;
}
/** The sandbox's own services. */
declare var sandbox: { readonly store: SandboxStore; readonly results: SandboxResults };
`
