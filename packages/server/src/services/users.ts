import { idPrefixes, type Role, type User } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newId } from "../lib/ids.ts";
import { hashPassword } from "../lib/passwords.ts";
import type { Repositories } from "../repositories/index.ts";
import type { ProjectFiles } from "../storage/project-files.ts";
import type { Principal } from "./auth.ts";
import { publishDeletedDevices } from "./projects.ts";
import { userView } from "./views.ts";

/** Admin-only user management. A server always keeps at least one admin. */
export function usersService(deps: {
  repos: Pick<Repositories, "users" | "projects" | "devices">;
  bus: EventBus;
  files: ProjectFiles;
  clock: Clock;
}) {
  const { repos, bus, files, clock } = deps;
  /** A user's access shrank (deleted, no longer admin): their open connections must re-authenticate. */
  const accessLost = (userId: string) => bus.publish("credential.revoked", { kind: "user", userId });

  function requireAdmin(principal: Principal) {
    if (principal.user.role !== "admin") throw new AppError("forbidden", "Only admins can manage users");
  }

  async function existing(userId: string) {
    const user = await repos.users.findById(userId);
    if (!user) throw new AppError("not_found", "No such user");
    return user;
  }

  return {
    async list(principal: Principal): Promise<User[]> {
      requireAdmin(principal);
      return (await repos.users.list()).map(userView);
    },

    /** An admin adds an account directly (registration may be closed). */
    async create(
      principal: Principal,
      input: { email: string; password: string; role: Role },
    ): Promise<User> {
      requireAdmin(principal);
      if (await repos.users.findByEmail(input.email))
        throw new AppError("conflict", "An account with this email already exists");
      const now = clock.now();
      const user = {
        id: newId(idPrefixes.user),
        email: input.email,
        passwordHash: await hashPassword(input.password),
        role: input.role,
        createdAt: now,
        updatedAt: now,
      };
      await repos.users.insert(user);
      await bus.publish("user.created", {
        actorId: principal.user.id,
        userId: user.id,
        email: user.email,
        role: user.role,
      });
      return userView(user);
    },

    async changeRole(principal: Principal, userId: string, role: Role): Promise<User> {
      requireAdmin(principal);
      const user = await existing(userId);
      if (user.role === "admin" && role !== "admin" && (await repos.users.countAdmins()) <= 1) {
        throw new AppError("last_admin");
      }
      const updated = await repos.users.updateRole(userId, role, clock.now());
      if (!updated) throw new AppError("not_found", "No such user");
      if (user.role === "admin" && role !== "admin") await accessLost(userId);
      await bus.publish("user.role_changed", { actorId: principal.user.id, userId, role });
      return userView(updated);
    },

    /** Removes the user, their sessions, tokens and projects (with everything in them, files included). */
    async delete(principal: Principal, userId: string): Promise<void> {
      requireAdmin(principal);
      const user = await existing(userId);
      if (user.role === "admin" && (await repos.users.countAdmins()) <= 1) throw new AppError("last_admin");
      const projectIds = await repos.projects.idsOwnedBy(userId);
      const devices = await Promise.all(
        projectIds.map(async (id) => [id, await repos.devices.idsInProjects([id])] as const),
      );
      await repos.users.delete(userId);
      await accessLost(userId);
      for (const [projectId, deviceIds] of devices) {
        await publishDeletedDevices(bus, principal.user.id, "user", projectId, deviceIds);
      }
      await Promise.all(projectIds.map((id) => files.remove(id)));
      await bus.publish("user.deleted", {
        actorId: principal.user.id,
        userId,
        email: user.email,
        projects: projectIds.length,
      });
    },
  };
}
