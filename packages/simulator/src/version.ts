import packageJson from "../package.json" with { type: "json" };

export const simulatorVersion: string = packageJson.version;
