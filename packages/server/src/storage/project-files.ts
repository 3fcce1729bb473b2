import fs from "node:fs/promises";
import path from "node:path";
import { idPattern, idPrefixes } from "@sdk/protocol";

/** Files that belong to one project (deployed bundles and the like) live in `<dataDir>/projects/<id>/`. */
export class ProjectFiles {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, "projects");
  }

  dir(projectId: string): string {
    if (!idPattern(idPrefixes.project).test(projectId)) throw new Error(`not a project id: ${projectId}`);
    return path.join(this.root, projectId);
  }

  deploymentDir(projectId: string, deploymentId: string): string {
    if (!idPattern(idPrefixes.deployment).test(deploymentId))
      throw new Error(`not a deployment id: ${deploymentId}`);
    return path.join(this.dir(projectId), "deployments", deploymentId);
  }

  /** Stores a deployment's bundle and source map; written to a temp dir first, then renamed into place. */
  async writeDeployment(
    projectId: string,
    deploymentId: string,
    files: { bundle: string; sourceMap?: string },
  ): Promise<void> {
    const dir = this.deploymentDir(projectId, deploymentId);
    const temp = `${dir}.tmp`;
    await fs.rm(temp, { recursive: true, force: true });
    await fs.mkdir(temp, { recursive: true, mode: 0o700 });
    await fs.writeFile(path.join(temp, "script.js"), files.bundle);
    if (files.sourceMap) await fs.writeFile(path.join(temp, "script.js.map"), files.sourceMap);
    await fs.rename(temp, dir);
  }

  async readDeployment(
    projectId: string,
    deploymentId: string,
  ): Promise<{ bundle: string; sourceMap?: string }> {
    const dir = this.deploymentDir(projectId, deploymentId);
    const bundle = await fs.readFile(path.join(dir, "script.js"), "utf8");
    const sourceMap = await fs.readFile(path.join(dir, "script.js.map"), "utf8").catch(() => undefined);
    return { bundle, sourceMap };
  }

  async removeDeployment(projectId: string, deploymentId: string): Promise<void> {
    await fs.rm(this.deploymentDir(projectId, deploymentId), { recursive: true, force: true });
  }

  async remove(projectId: string): Promise<void> {
    await fs.rm(this.dir(projectId), { recursive: true, force: true });
  }
}
