// What the repository-wide checks read: the workspace packages, their source files, and what
// each file imports or reaches by a relative URL. Plain text scanning: comments, strings, template
// literals and regular expressions are blanked first, so code shown inside them is not taken for an
// import; a specifier is then read from the original text at the blanked string's place.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export interface Manifest {
  name: string;
  exports?: string | Record<string, unknown>;
  bin?: string | Record<string, string>;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

export interface Workspace {
  /** Repository-relative directory, "" for the root. */
  dir: string;
  manifest: Manifest;
}

/** How a file names another module: an import statement, `import()`, or `import.meta.resolve()`. */
type ImportKind = "static" | "dynamic" | "resolve";

export interface Import {
  specifier: string;
  kind: ImportKind;
  line: number;
}

const sourceExtension = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/;
const skippedDirs = new Set(["node_modules", "dist", "data", "coverage"]);

function readManifest(dir: string): Manifest {
  return JSON.parse(fs.readFileSync(path.join(repoRoot, dir, "package.json"), "utf8")) as Manifest;
}

/** The root package and every workspace package it lists. */
export function workspaces(): Workspace[] {
  const root = readManifest("");
  const dirs = (root.workspaces ?? []).flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [pattern];
    const parent = pattern.slice(0, -2);
    return fs
      .readdirSync(path.join(repoRoot, parent), { withFileTypes: true })
      .filter((d) => d.isDirectory() && fs.existsSync(path.join(repoRoot, parent, d.name, "package.json")))
      .map((d) => `${parent}/${d.name}`);
  });
  return [{ dir: "", manifest: root }, ...dirs.sort().map((dir) => ({ dir, manifest: readManifest(dir) }))];
}

/** Source files of one workspace (repository-relative); the root's exclude the packages' folders. */
export function sourceFiles(ws: Workspace, all: Workspace[]): string[] {
  const others = new Set(all.map((w) => w.dir).filter((d) => d !== ws.dir && d !== ""));
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(repoRoot, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith(".") && !skippedDirs.has(entry.name) && !others.has(child)) walk(child);
      } else if (sourceExtension.test(entry.name)) {
        out.push(child);
      }
    }
  };
  walk(ws.dir);
  return out.sort();
}

/** The workspace a repository path belongs to (the deepest one holding it). */
export function owner(file: string, all: Workspace[]): Workspace {
  return all
    .filter((w) => w.dir === "" || file === w.dir || file.startsWith(`${w.dir}/`))
    .reduce((a, b) => (b.dir.length > a.dir.length ? b : a));
}

const regexAfter = new Set([..."(,=:[!&|?{};+-*%<>~^"]);
const regexAfterWord = /(?:^|[^\w$])(?:return|typeof|case|of|in|delete|void|throw|new|do|else|yield|await)$/;

/**
 * The text with comments, the contents of quoted strings, template-literal text and regular
 * expressions replaced by spaces; newlines and every other offset stay where they were.
 */
export function codeOnly(text: string): string {
  const out = text.split("");
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  // Each entry is the brace depth at which a `${` of a template literal was opened.
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  const skipTemplateText = () => {
    // i is just after a backtick or a closing `}` of an expression: find the end of the text.
    const start = i;
    while (i < text.length) {
      const c = text[i];
      if (c === "\\") i += 2;
      else if (c === "`") {
        blank(start, i);
        i++;
        return;
      } else if (c === "$" && text[i + 1] === "{") {
        blank(start, i);
        templates.push(depth);
        depth++;
        i += 2;
        return;
      } else i++;
    }
    blank(start, i);
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'") {
      // A quote never spans lines: an apostrophe in JSX text ends at the line's end.
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      blank(i + 1, Math.min(j, text.length));
      i = j + 1;
    } else if (c === "`") {
      i++;
      skipTemplateText();
    } else if (c === "{") {
      depth++;
      i++;
    } else if (c === "}") {
      depth--;
      i++;
      if (templates.length > 0 && templates[templates.length - 1] === depth) {
        templates.pop();
        skipTemplateText();
      }
    } else if (c === "/" && isRegexStart(text, i)) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== "\n") {
        const r = text[j];
        if (r === "\\") j++;
        else if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
        j++;
      }
      blank(i + 1, j);
      i = j + 1;
    } else i++;
  }
  return out.join("");
}

function isRegexStart(text: string, at: number): boolean {
  let k = at - 1;
  while (k >= 0 && /\s/.test(text[k]!)) k--;
  if (k < 0) return true;
  return regexAfter.has(text[k]!) || regexAfterWord.test(text.slice(Math.max(0, k - 10), k + 1));
}

// Matched on the blanked text: a string shows as its quotes around spaces.
const str = String.raw`(["'])( *)\1`;
const patterns: [ImportKind, RegExp][] = [
  // import x from "m"; import { a, type b } from "m"; export * from "m"; import type T from "m"
  [
    "static",
    new RegExp(String.raw`(?<![\w$.])(?:import|export)\s+(?:type\s+)?[\w\s{},*$]*?\bfrom\s*${str}`, "dg"),
  ],
  // import "m";
  ["static", new RegExp(String.raw`(?<![\w$.])import\s*${str}`, "dg")],
  // import("m"), including type positions: typeof import("m")
  ["dynamic", new RegExp(String.raw`(?<![\w$.])import\s*\(\s*${str}\s*[,)]`, "dg")],
  ["resolve", new RegExp(String.raw`(?<![\w$])import\.meta\.resolve\s*\(\s*${str}\s*\)`, "dg")],
];

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let k = 0; k < index; k++) if (text.charCodeAt(k) === 10) line++;
  return line;
}

/** Every module a source text names, in order. */
export function importsOf(text: string): Import[] {
  const code = codeOnly(text);
  const found: (Import & { at: number })[] = [];
  for (const [kind, re] of patterns) {
    for (const m of code.matchAll(re)) {
      const [from, to] = m.indices![2]!;
      if (to > from)
        found.push({ specifier: text.slice(from, to), kind, line: lineOf(code, m.index), at: m.index });
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ at: _, ...i }) => i);
}

/** Relative URLs a text builds against its own location: `new URL("../x", import.meta.url)`. */
export function relativeUrlsOf(text: string): { specifier: string; line: number }[] {
  const code = codeOnly(text);
  const re = new RegExp(String.raw`new\s+URL\(\s*${str}\s*,\s*import\.meta\.url\s*\)`, "dg");
  return [...code.matchAll(re)]
    .map((m) => ({ specifier: text.slice(...m.indices![2]!), line: lineOf(code, m.index) }))
    .filter((u) => isRelative(u.specifier));
}

/** The package name a bare specifier names: "@sdk/client/credentials" → "@sdk/client". */
export function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** A specifier that names a file by path (resolved against the importing file). */
export const isRelative = (specifier: string) => specifier.startsWith("./") || specifier.startsWith("../");

/** The repository path a relative specifier names from a file. */
export function resolveFrom(file: string, specifier: string): string {
  const target = path.posix
    .normalize(path.posix.join(path.posix.dirname(file), specifier))
    .replace(/\/$/, "");
  return target === "." ? "" : target;
}

export function read(file: string): string {
  return fs.readFileSync(path.join(repoRoot, file), "utf8");
}
