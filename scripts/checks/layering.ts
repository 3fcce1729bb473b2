// The layering of DESIGN.md §2 as data, checked on the source text.
// Run: `node scripts/checks/layering.ts` (also run by `npm test` through test/layering.test.ts).
import { fileURLToPath } from "node:url";
import {
  codeOnly,
  type Import,
  importsOf,
  isRelative,
  owner,
  packageOf,
  read,
  resolveFrom,
  sourceFiles,
  type Workspace,
  workspaces,
} from "./sources.ts";

interface PackageRule {
  /** Our packages the shipped code (src/, bin/) may import. */
  imports: string[];
  /** Our packages it may only locate (`import.meta.resolve`), e.g. to start them as a process. */
  locates?: string[];
}

/** What each package's shipped code may import of ours. Tests may import more (a real server, a board). */
export const packageRules: Record<string, PackageRule> = {
  "@sdk/protocol": { imports: [] },
  "@sdk/client": { imports: ["@sdk/protocol"] },
  "@sdk/device": { imports: ["@sdk/protocol"] },
  "@sdk/sandbox": { imports: ["@sdk/protocol", "@sdk/device"] },
  "@sdk/build": { imports: ["@sdk/device", "@sdk/protocol"], locates: ["@sdk/device", "@sdk/protocol"] },
  "@sdk/simulator": { imports: ["@sdk/protocol"] },
  "@sdk/docs": { imports: [] },
  "@sdk/server": { imports: ["@sdk/protocol", "@sdk/sandbox", "@sdk/dashboard", "@sdk/docs"] },
  // The user-facing tools reach the server only through @sdk/client; `sdk dev` runs a local
  // server as a child process (so it locates @sdk/server) with a simulated board and the sandbox.
  "@sdk/cli": {
    imports: ["@sdk/client", "@sdk/protocol", "@sdk/build", "@sdk/sandbox", "@sdk/simulator"],
    locates: ["@sdk/server"],
  },
  "@sdk/mcp": { imports: ["@sdk/client", "@sdk/protocol", "@sdk/build", "@sdk/simulator", "@sdk/docs"] },
  "@sdk/dashboard": { imports: ["@sdk/client", "@sdk/protocol"] },
  // Test-only packages: they start real servers and devices, so they may reach everything.
  "@sdk/test-helpers": {
    imports: ["@sdk/build", "@sdk/client", "@sdk/protocol", "@sdk/server"],
    locates: ["@sdk/server"],
  },
  "@sdk/conformance": { imports: ["@sdk/protocol", "@sdk/test-helpers"] },
  // Builds the firmware's host port and stands in for a TLS-terminating proxy: Node and the C tools only.
  "@sdk/firmware-host": { imports: [] },
};

interface PathRule {
  /** Files whose repository path starts with this. */
  from: string;
  /** Import targets (resolved repository paths) starting with any of these are violations. */
  never: string[];
  why: string;
}

const server = "packages/server/src/";
const above = (...dirs: string[]) => dirs.map((d) => `${server}${d}/`);

/** Rules on repository paths, for imports by relative path inside a package and across the tree. */
export const pathRules: PathRule[] = [
  { from: `${server}http/`, never: above("repositories", "db"), why: "routes go through services" },
  { from: `${server}ws/`, never: above("repositories", "db"), why: "sockets go through services and events" },
  {
    from: `${server}services/`,
    never: above("http", "ws"),
    why: "services never reach up into routes or sockets",
  },
  {
    from: `${server}repositories/`,
    never: above("http", "ws", "services", "events", "link"),
    why: "repositories hold SQL and import nothing above them",
  },
  {
    from: `${server}db/`,
    never: above("http", "ws", "services", "repositories", "events", "link"),
    why: "the database layer imports nothing above it",
  },
  {
    from: `${server}events/`,
    never: above("http", "ws", "services", "repositories", "db", "link"),
    why: "events import nothing above them",
  },
  { from: "", never: ["firmware/"], why: "the firmware's C sources are not TypeScript modules" },
];

/** Text that only one file of a tree may contain. */
export const textRules = [
  {
    files: server,
    allowedIn: [`${server}config.ts`],
    pattern: /process\.env/,
    why: "config is parsed once in config.ts; nothing else reads process.env",
  },
];

/**
 * Firmware tooling (a script under scripts/ that names firmware/ in its code) generates C from
 * the protocol's data: it reads only @sdk/protocol and Node's built-ins.
 */
export const firmwareTooling = {
  isTooling: (file: string, code: string) => file.startsWith("scripts/") && /firmware\//.test(code),
  imports: ["@sdk/protocol"],
};

/** Why importing a target (a resolved repository path or a package specifier) from a file breaks a path rule. */
export function pathViolations(file: string, target: string): string[] {
  return pathRules
    .filter((r) => file.startsWith(r.from) && r.never.some((n) => target.startsWith(n)))
    .map((r) => r.why);
}

function ours(specifier: string): boolean {
  return specifier.startsWith("@sdk/");
}

function shipped(file: string, ws: Workspace): boolean {
  const inside = file.slice(ws.dir.length + 1);
  return ws.dir !== "" && (inside.startsWith("src/") || inside.startsWith("bin/"));
}

/** The package of ours a shipped file of a package may not import, if the import breaks its rule. */
export function packageViolation(imp: Import, rule: PackageRule): string | undefined {
  if (!ours(imp.specifier)) return undefined;
  const pkg = packageOf(imp.specifier);
  const allowed = imp.kind === "resolve" ? [...rule.imports, ...(rule.locates ?? [])] : rule.imports;
  return allowed.includes(pkg) ? undefined : pkg;
}

export function layeringViolations(all: Workspace[] = workspaces()): string[] {
  const problems: string[] = [];
  for (const ws of all) {
    const name = ws.manifest.name;
    const rule = ws.dir === "" ? undefined : packageRules[name];
    if (ws.dir !== "" && !rule) problems.push(`${ws.dir}/package.json: ${name} has no rule in packageRules`);
    for (const file of sourceFiles(ws, all)) {
      const text = read(file);
      const imports = importsOf(text);
      for (const imp of imports) {
        const where = `${file}:${imp.line} imports "${imp.specifier}"`;
        if (rule && shipped(file, ws) && packageOf(imp.specifier) !== name) {
          const bad = packageViolation(imp, rule);
          if (bad)
            problems.push(
              `${where}: ${name} may import only ${rule.imports.join(", ") || "nothing of ours"}`,
            );
        }
        const target = isRelative(imp.specifier) ? resolveFrom(file, imp.specifier) : imp.specifier;
        for (const why of pathViolations(file, target)) problems.push(`${where}: ${why}`);
      }
      for (const r of textRules) {
        if (!file.startsWith(r.files) || r.allowedIn.includes(file)) continue;
        const code = codeOnly(text);
        const at = code.search(r.pattern);
        if (at >= 0) problems.push(`${file}:${code.slice(0, at).split("\n").length}: ${r.why}`);
      }
      if (firmwareTooling.isTooling(file, codeOnly(text))) {
        for (const imp of imports) {
          const builtin = imp.specifier.startsWith("node:");
          const target = isRelative(imp.specifier) ? resolveFrom(file, imp.specifier) : undefined;
          const local =
            target !== undefined && owner(target, all).dir === "" && target.startsWith("scripts/");
          if (!builtin && !local && !firmwareTooling.imports.includes(packageOf(imp.specifier))) {
            problems.push(
              `${file}:${imp.line} imports "${imp.specifier}": firmware tooling reads only @sdk/protocol`,
            );
          }
        }
      }
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = layeringViolations();
  for (const p of problems) console.error(p);
  console.log(problems.length === 0 ? "layering: no violations" : `layering: ${problems.length} violations`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}
