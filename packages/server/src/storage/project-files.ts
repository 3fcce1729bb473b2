import fs from "node:fs/promises";
import path from "node:path";

/** Files that belong to one project (deployed bundles and the like) live in `<dataDir>/projects/<id>/`. */
export class ProjectFiles {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, "projects");
  }

  dir(projectId: string): string {
    if (!/^prj_[a-z2-7]+$/.test(projectId)) throw new Error(`not a project id: ${projectId}`);
    return path.join(this.root, projectId);
  }

  async remove(projectId: string): Promise<void> {
    await fs.rm(this.dir(projectId), { recursive: true, force: true });
  }
}
