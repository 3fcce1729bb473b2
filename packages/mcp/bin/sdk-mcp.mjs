#!/usr/bin/env node
// Plain JavaScript so an old Node gets a clear message (on stderr: stdout carries only MCP messages).
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(`sdk-mcp needs Node.js 22.18 or newer (this is ${process.versions.node}).\n`);
  process.exit(1);
}
const { runStdio } = await import("../src/index.ts");
await runStdio();
