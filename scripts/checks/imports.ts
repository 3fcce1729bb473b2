// Every package a file imports is declared in its own package.json (dependencies for what ships:
// src/, bin/ and exported files; devDependencies are enough for tests and tooling), and no file
// reaches into another package by a relative path. Run: `node scripts/checks/imports.ts`.
import { isBuiltin } from "node:module";
import { fileURLToPath } from "node:url";
import {
  importsOf,
  isRelative,
  type Manifest,
  owner,
  packageOf,
  read,
  relativeUrlsOf,
  resolveFrom,
  sourceFiles,
  type Workspace,
  workspaces,
} from "./sources.ts";

function targets(field: Manifest["exports"] | Manifest["bin"]): string[] {
  if (field === undefined) return [];
  if (typeof field === "string") return [field];
  return Object.values(field).flatMap((v) =>
    typeof v === "string" ? [v] : targets(v as Record<string, unknown> as Manifest["exports"]),
  );
}

/** Whether a file ships with its package (so what it imports must be a runtime dependency). */
export function ships(file: string, ws: Workspace): boolean {
  if (ws.dir === "") return false;
  const inside = file.slice(ws.dir.length + 1);
  if (inside.startsWith("src/") || inside.startsWith("bin/")) return true;
  const entries = [...targets(ws.manifest.exports), ...targets(ws.manifest.bin)];
  return entries.some((t) => t.replace(/^\.\//, "") === inside);
}

const hasScheme = (specifier: string) => /^[a-z][a-z0-9+.-]*:/i.test(specifier);

/** Whether a repository path lies outside what a workspace may reach by relative path. */
function leaves(target: string, ws: Workspace, all: Workspace[]): boolean {
  if (ws.dir !== "") return !(target === ws.dir || target.startsWith(`${ws.dir}/`));
  // The root's own tooling (scripts/, bench/, test/) may read the repository, not a package's files.
  return owner(target, all).dir !== "" || target.startsWith("..");
}

export function undeclaredImports(all: Workspace[] = workspaces()): string[] {
  const problems: string[] = [];
  for (const ws of all) {
    const manifestPath = ws.dir ? `${ws.dir}/package.json` : "package.json";
    const runtime = {
      ...ws.manifest.dependencies,
      ...ws.manifest.peerDependencies,
      ...ws.manifest.optionalDependencies,
    };
    const dev = ws.manifest.devDependencies ?? {};
    for (const file of sourceFiles(ws, all)) {
      const text = read(file);
      for (const { specifier, line } of importsOf(text)) {
        const where = `${file}:${line}`;
        if (isRelative(specifier)) {
          const target = resolveFrom(file, specifier);
          if (leaves(target, ws, all)) {
            problems.push(
              `${where} imports "${specifier}" by a relative path outside ${ws.dir || "the root's tooling"}`,
            );
          }
          continue;
        }
        if (isBuiltin(specifier) || hasScheme(specifier) || specifier.startsWith("#")) continue;
        const pkg = packageOf(specifier);
        if (pkg === ws.manifest.name || pkg in runtime) continue;
        if (ships(file, ws)) {
          const hint = pkg in dev ? " (it is only in devDependencies)" : "";
          problems.push(
            `${where} imports "${specifier}": ${manifestPath} does not list ${pkg} in dependencies${hint}`,
          );
        } else if (!(pkg in dev)) {
          problems.push(
            `${where} imports "${specifier}": ${manifestPath} lists ${pkg} in neither dependencies nor devDependencies`,
          );
        }
      }
      for (const { specifier, line } of relativeUrlsOf(text)) {
        const target = resolveFrom(file, specifier);
        if (leaves(target, ws, all)) {
          problems.push(
            `${file}:${line} reaches "${specifier}" by a relative URL outside ${ws.dir || "the root's tooling"}`,
          );
        }
      }
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = undeclaredImports();
  for (const p of problems) console.error(p);
  console.log(
    problems.length === 0 ? "imports: every import is declared" : `imports: ${problems.length} problems`,
  );
  process.exitCode = problems.length === 0 ? 0 : 1;
}
