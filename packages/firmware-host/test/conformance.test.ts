// The device conformance suite against the firmware's Linux build, exactly as it runs against the
// simulator: a real TCP socket to the suite's fake server and to the real server, the control
// protocol on stdin/stdout. The binary is built with ASan and UBSan.
import { test } from "node:test";
import { controlProcessFactory, deviceConformance } from "@sdk/conformance";
import { firmwareHost } from "../src/build.ts";

const host = firmwareHost();
if ("skip" in host) {
  console.log(`# SKIPPED: ${host.skip}`);
  test("device conformance: sdk-firmware-host", { skip: host.skip }, () => {});
} else {
  deviceConformance("sdk-firmware-host", controlProcessFactory(host.binary));
}
