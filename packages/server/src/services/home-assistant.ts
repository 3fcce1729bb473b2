import {
  type EntityConfig,
  entityProblems,
  type HomeAssistantStatus,
  StoredDeploymentManifest,
} from "@sdk/protocol";
import type { HomeAssistantConfig } from "../config.ts";
import type { Repositories } from "../repositories/index.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectNotFound } from "./projects.ts";

/** A live deployment's entities: the ones Home Assistant takes, and why the others are left out. */
export interface LiveEntities {
  projectId: string;
  deploymentId: string;
  entities: EntityConfig[];
  /** Entities a deployment stored before the Home Assistant rules may hold (an id with `.`, a wrong unit). */
  dropped: Array<{ id: string; problems: string }>;
}

function liveEntitiesOf(row: { id: string; projectId: string; manifest: string }): LiveEntities {
  const stored = StoredDeploymentManifest.parse(JSON.parse(row.manifest)).entities;
  const entities: EntityConfig[] = [];
  const dropped: LiveEntities["dropped"] = [];
  for (const entity of stored) {
    const problems = entityProblems(entity);
    if (problems.length === 0) entities.push(entity);
    else
      dropped.push({
        id: entity.id,
        problems: problems.map((p) => (p.field ? `${p.field} ${p.message}` : p.message)).join("; "),
      });
  }
  return { projectId: row.projectId, deploymentId: row.id, entities, dropped };
}

/** What the running bridge tells the status endpoint about one project. */
export interface BridgeStatusSource {
  connected(): boolean;
  devices(projectId: string): Promise<HomeAssistantStatus["devices"]>;
}

/**
 * The server-wide reads the Home Assistant bridge needs (it acts for no user), and the bridge's
 * status for a project's owner.
 */
export function homeAssistantService(deps: {
  repos: Pick<Repositories, "projects" | "deployments" | "devices" | "deviceState">;
  config: HomeAssistantConfig | null;
}) {
  const { repos, config } = deps;
  let bridge: BridgeStatusSource | null = null;
  return {
    /** Every project with a live deployment, with the entities it declares. */
    async liveProjects(): Promise<LiveEntities[]> {
      return (await repos.deployments.allActive()).map(liveEntitiesOf);
    },
    /** null: the project has no live deployment. */
    async liveEntities(projectId: string): Promise<LiveEntities | null> {
      const row = await repos.deployments.active(projectId);
      return row ? liveEntitiesOf(row) : null;
    },
    devicesOf: (projectId: string) => repos.devices.inProject(projectId),
    /** The latest value of each entity of a device, parsed. */
    async latestStates(deviceId: string): Promise<Map<string, unknown>> {
      const rows = await repos.deviceState.latestOf(deviceId);
      return new Map(rows.map((r) => [r.entityId, JSON.parse(r.value) as unknown]));
    },
    /** The running bridge registers itself while started. */
    attach(source: BridgeStatusSource | null) {
      bridge = source;
    },
    async status(principal: Principal, projectId: string): Promise<HomeAssistantStatus> {
      if (!(await repos.projects.findVisible(viewerOf(principal), projectId))) throw projectNotFound();
      if (!config)
        return {
          enabled: false,
          connected: false,
          broker: null,
          mode: null,
          discoveryPrefix: null,
          baseTopic: null,
          devices: [],
        };
      return {
        enabled: true,
        connected: bridge?.connected() ?? false,
        broker: config.broker,
        mode: config.discovery,
        discoveryPrefix: config.discoveryPrefix,
        baseTopic: config.baseTopic,
        devices: bridge ? await bridge.devices(projectId) : [],
      };
    },
  };
}
export type HomeAssistantService = ReturnType<typeof homeAssistantService>;
