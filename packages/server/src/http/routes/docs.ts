import fs from "node:fs/promises";
import path from "node:path";
import { headingSlug } from "@sdk/docs";
import { errorCatalog, errorCodes } from "@sdk/protocol";
import type { FastifyInstance } from "fastify";
import type { Marked } from "marked";
import { AppError } from "../../errors.ts";
import { escapeHtml, htmlPage } from "../html.ts";
import { buildOpenApi } from "../openapi.ts";

let renderer: Promise<Marked> | undefined;

/** The Markdown renderer, loaded on the first docs request rather than at boot. */
function markdown(): Promise<Marked> {
  renderer ??= import("marked").then(
    ({ Marked }) =>
      new Marked({
        renderer: {
          heading({ tokens, depth, text }) {
            return `<h${depth} id="${headingSlug(text)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
          },
        },
      }),
  );
  return renderer;
}

async function errorsPage(): Promise<string> {
  const md = await markdown();
  const rows = errorCodes
    .map((code) => {
      const e = errorCatalog[code];
      return `<h2 id="${code}"><code>${code}</code></h2>
<p>HTTP ${e.status} · <q>${escapeHtml(e.message)}</q></p>
${md.parse(e.description)}`;
    })
    .join("\n");
  return htmlPage(
    "Error reference",
    `<h1>Error reference</h1>
<p>Every error answer has the shape <code>{"success": false, "error": {"code", "message", "docs"}}</code>. The <code>code</code> values below are stable; <code>docs</code> links to the entry here.</p>
${rows}`,
  );
}

/** Human docs under `/docs/`, the OpenAPI document, and the answers for removed or moved URLs. */
export function docsRoutes(app: FastifyInstance, docsDir: string, version: string): void {
  // Built on first use: nothing here should slow the boot.
  let openApi: ReturnType<typeof buildOpenApi> | undefined;
  let errors: Promise<string> | undefined;

  app.get("/v1/openapi.json", async () => {
    openApi ??= buildOpenApi(version);
    return openApi;
  });
  app.get("/docs/errors", async (_request, reply) => {
    errors ??= errorsPage();
    reply.type("text/html; charset=utf-8");
    return errors;
  });
  app.get("/docs", async (_request, reply) => {
    const files = (await fs.readdir(docsDir)).filter((f) => f.endsWith(".md")).sort();
    const links = files
      .map((f) => `<li><a href="/docs/${f.slice(0, -3)}">${escapeHtml(f.slice(0, -3))}</a></li>`)
      .join("");
    reply.type("text/html; charset=utf-8");
    return htmlPage(
      "Documentation",
      `<h1>Documentation</h1><ul><li><a href="/docs/errors">Error reference</a></li>${links}<li><a href="/v1/openapi.json">OpenAPI (JSON)</a></li></ul>`,
    );
  });
  app.get<{ Params: { page: string } }>("/docs/:page", async (request, reply) => {
    const page = request.params.page;
    if (!/^[a-z][a-z0-9-]*$/.test(page))
      throw new AppError("not_found", `No documentation page named ${page}`);
    let text: string;
    try {
      text = await fs.readFile(path.join(docsDir, `${page}.md`), "utf8");
    } catch {
      throw new AppError("not_found", `No documentation page named ${page}`);
    }
    const title = /^#\s+(.+)$/m.exec(text)?.[1] ?? page;
    reply.type("text/html; charset=utf-8");
    return htmlPage(title, await (await markdown()).parse(text));
  });

  app.get("/changelog", async (_request, reply) => reply.redirect("/docs/changelog", 301));
  app.get("/logs/stream", async () => {
    throw new AppError(
      "gone",
      "GET /logs/stream was removed; watch a device over the WebSocket /v1/projects/:projectId/devices/:deviceId/watch (see /docs/protocol)",
    );
  });
}
