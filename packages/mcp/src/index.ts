import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { resources } from "./resources.ts";
import { failure, type ToolContext, tools } from "./tools.ts";

const version = "0.1.0";

/** The MCP server with its 7 tools and reference resources. */
export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(
    { name: "sdk", version },
    {
      instructions:
        "Tools for sdk device scripts (TypeScript classes that drive Raspberry Pi Pico W boards from an sdk server). Read sdk://reference/device-api before writing a script. Typical loop: edit src/index.ts → build (fix diagnostics) → deploy (or deploy with canary: first on some devices, promoted or rolled back by the server) → get_device / get_logs → send_message.",
    },
  );
  for (const [name, tool] of Object.entries(tools)) {
    server.registerTool(name, { description: tool.description, inputSchema: tool.input }, (async (
      args: Record<string, unknown>,
      extra: { signal?: AbortSignal },
    ) => {
      try {
        return await (
          tool.run as (c: ToolContext, a: Record<string, unknown>) => ReturnType<typeof tool.run>
        )({ ...ctx, signal: extra.signal }, args);
      } catch (error) {
        return failure(error);
      }
    }) as never);
  }
  for (const r of resources) {
    server.registerResource(
      r.name,
      r.uri,
      { title: r.title, description: r.description, mimeType: r.mimeType },
      async (uri) => ({
        contents: [{ uri: uri.href, mimeType: r.mimeType, text: r.read() }],
      }),
    );
  }
  return server;
}

/** Runs on stdio. Only MCP messages go to stdout; diagnostics go to stderr. */
export async function runStdio(): Promise<void> {
  // Anything that would print to stdout would corrupt the protocol stream.
  console.log = (...args: unknown[]) => console.error(...args);
  console.info = (...args: unknown[]) => console.error(...args);
  const server = createMcpServer({ env: process.env });
  await server.connect(new StdioServerTransport());
  process.stderr.write(`sdk-mcp ${version} ready on stdio\n`);
}
