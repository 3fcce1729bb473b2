#!/usr/bin/env node
// Plain JavaScript so that an old Node gets a clear message instead of a syntax error.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `sdk needs Node.js 22.18 or newer (this is ${process.versions.node}). Install a current Node.js and try again.\n`,
  );
  process.exit(1);
}
const { main } = await import("../src/main.ts");
process.exitCode = await main(process.argv.slice(2));
