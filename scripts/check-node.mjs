// Plain JavaScript on purpose: it must run on old Node versions to explain the problem.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(
    `sdk needs Node.js 22.18 or newer (this is ${process.versions.node}). ` +
      "Install a current Node.js from https://nodejs.org or your package manager, then try again.",
  );
  process.exit(1);
}
