import { fileURLToPath } from "node:url";
import { controlProcessFactory, deviceConformance } from "@sdk/conformance";

// The same suite through the control protocol a firmware host build speaks: a child process
// driven over stdin/stdout, here the simulator behind src/control-host.ts.
const host = fileURLToPath(new URL("../src/control-host.ts", import.meta.url));

deviceConformance("simulator over the control protocol", controlProcessFactory(process.execPath, [host]));
