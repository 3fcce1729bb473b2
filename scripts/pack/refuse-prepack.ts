// The `prepack` of the published workspace packages: their sources are TypeScript, which Node does
// not run from node_modules, so `npm pack` / `npm publish` in a package folder would ship a package
// that cannot work. The compiled packages come from `npm run pack` at the repository root.
const name = process.env.npm_package_name ?? "this package";
process.stderr.write(
  `${name} is published from its compiled form: run \`npm run pack\` at the repository root (it writes dist/packages/*.tgz; see docs/architecture.md, "Publishing").\n`,
);
process.exit(1);
