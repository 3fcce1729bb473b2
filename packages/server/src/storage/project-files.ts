import fs from "node:fs/promises";
import path from "node:path";
import { idPattern, idPrefixes } from "@sdk/protocol";

/**
 * Files that belong to one project live in `<dataDir>/projects/<id>/`: since 0009 only deployed
 * bundles of older servers, read once at boot to copy them into the database.
 */
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

  /**
   * The bundle and source map a server before 0009 stored for a deployment (they are in the
   * database since: copied in at boot); undefined when there is no such file.
   */
  async readDeployment(
    projectId: string,
    deploymentId: string,
  ): Promise<{ bundle: string; sourceMap?: string } | undefined> {
    const dir = this.deploymentDir(projectId, deploymentId);
    let bundle: string;
    try {
      bundle = await fs.readFile(path.join(dir, "script.js"), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const sourceMap = await fs.readFile(path.join(dir, "script.js.map"), "utf8").catch(() => undefined);
    return sourceMap === undefined ? { bundle } : { bundle, sourceMap };
  }

  /** Removes a deployment's files (of a server before 0009), if any. */
  async removeDeployment(projectId: string, deploymentId: string): Promise<void> {
    await fs.rm(this.deploymentDir(projectId, deploymentId), { recursive: true, force: true });
  }

  async remove(projectId: string): Promise<void> {
    await fs.rm(this.dir(projectId), { recursive: true, force: true });
  }
}
