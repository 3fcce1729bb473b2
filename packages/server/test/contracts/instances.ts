import { type TestContext, test } from "node:test";

/**
 * Declares a test of what travels between instances: only where the contract runs against two
 * (a cluster's implementation), not one process's.
 */
export function acrossInstances(options: { instances: 1 | 2 }) {
  return (title: string, body: (t: TestContext) => Promise<void>): void => {
    if (options.instances === 2) test(title, body);
  };
}
