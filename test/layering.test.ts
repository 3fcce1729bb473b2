// The layering of DESIGN.md §2 (rules in scripts/checks/layering.ts) holds for the whole tree.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  firmwareTooling,
  layeringViolations,
  packageRules,
  packageViolation,
  pathViolations,
} from "../scripts/checks/layering.ts";
import { workspaces } from "../scripts/checks/sources.ts";

test("no file breaks a layering rule", () => {
  assert.deepEqual(layeringViolations(), []);
});

test("every workspace package has a rule", () => {
  const names = workspaces()
    .filter((w) => w.dir !== "")
    .map((w) => w.manifest.name);
  assert.deepEqual(
    names.filter((n) => !(n in packageRules)),
    [],
  );
});

test("the rules see a violation when there is one", () => {
  const imp = (specifier: string, kind: "static" | "dynamic" | "resolve" = "static") => ({
    specifier,
    kind,
    line: 1,
  });
  assert.equal(packageViolation(imp("@sdk/server/main"), packageRules["@sdk/cli"]!), "@sdk/server");
  assert.equal(packageViolation(imp("@sdk/server/main", "resolve"), packageRules["@sdk/cli"]!), undefined);
  assert.equal(packageViolation(imp("@sdk/client"), packageRules["@sdk/protocol"]!), "@sdk/client");
  assert.equal(packageViolation(imp("zod"), packageRules["@sdk/protocol"]!), undefined);
  assert.equal(packageViolation(imp("@sdk/protocol/hardware"), packageRules["@sdk/device"]!), undefined);
  assert.deepEqual(
    pathViolations("packages/server/src/http/routes/x.ts", "packages/server/src/repositories/y.ts"),
    ["routes go through services"],
  );
  assert.deepEqual(pathViolations("packages/server/src/ws/x.ts", "packages/server/src/repositories/y.ts"), [
    "sockets go through services and events",
  ]);
  assert.deepEqual(pathViolations("packages/server/src/events/bus.ts", "packages/server/src/services/y.ts"), [
    "events import nothing above them",
  ]);
  assert.deepEqual(pathViolations("scripts/x.ts", "firmware/core/pins.h"), [
    "the firmware's C sources are not TypeScript modules",
  ]);
  assert.deepEqual(
    pathViolations("packages/server/src/services/x.ts", "packages/server/src/repositories/y.ts"),
    [],
  );
  assert.equal(
    firmwareTooling.isTooling("scripts/generate-pins.ts", 'const out = "firmware/core/pins.h";'),
    true,
  );
  assert.equal(firmwareTooling.isTooling("scripts/generate-docs.ts", 'const out = "docs/api.md";'), false);
});
