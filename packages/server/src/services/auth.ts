import { type AuthResult, type CreatedApiToken, idPrefixes, type ServerInfo } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus, Revocation } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newId } from "../lib/ids.ts";
import { burnPasswordCheck, hashPassword, verifyPassword } from "../lib/passwords.ts";
import { hashSecret, newSecret } from "../lib/tokens.ts";
import type { Repositories, Viewer } from "../repositories/index.ts";
import type { UserRow } from "../repositories/users.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { tokenView, userView } from "./views.ts";

/** The authenticated caller of a request and how they proved it. */
export interface Principal {
  user: UserRow;
  via: "session" | "token";
  /** The session's hash, or the API token's id. */
  credentialId: string;
}

export const viewerOf = (principal: Principal): Viewer => ({
  userId: principal.user.id,
  isAdmin: principal.user.role === "admin",
});

/** True when an open connection authenticated as `principal` must end because of `revocation`. */
export function revokes(revocation: Revocation, principal: Principal): boolean {
  if (revocation.kind === "credential") return revocation.credentialId === principal.credentialId;
  if (revocation.sessionsOnly && principal.via !== "session") return false;
  return revocation.userId === principal.user.id && revocation.exceptCredentialId !== principal.credentialId;
}

export interface Credentials {
  email: string;
  password: string;
  issueToken?: boolean;
  tokenName?: string;
}

export interface SignedIn extends AuthResult {
  /** A new browser session's cookie value, unless an API token was asked for instead. */
  session?: { value: string; maxAgeSeconds: number };
}

const tokenLastUsedResolutionMs = 60_000;

export interface AuthServiceDeps {
  repos: Pick<Repositories, "users" | "sessions" | "apiTokens">;
  bus: EventBus;
  /** In memory for one process, in the database for a cluster (rateLimiter in rate-limiter.ts). */
  limiter: RateLimiter;
  clock: Clock;
  allowRegistration: boolean;
  sessionMaxAgeDays: number;
  version: string;
  deploymentsKept: number;
}

export function authService({
  repos,
  bus,
  limiter,
  clock,
  allowRegistration,
  sessionMaxAgeDays,
  version,
  deploymentsKept,
}: AuthServiceDeps) {
  const sessionMaxAgeMs = sessionMaxAgeDays * 86_400_000;
  const revoke = (revocation: Revocation) => bus.publish("credential.revoked", revocation);

  async function throttle(keys: string[]) {
    const wait = await limiter.retryAfterSeconds(keys);
    if (wait > 0)
      throw new AppError("rate_limited", "Rate limit exceeded", { headers: { "retry-after": String(wait) } });
  }

  async function issueApiToken(userId: string, name: string): Promise<CreatedApiToken> {
    const token = newSecret("sdk");
    const row = {
      id: newId(idPrefixes.token),
      userId,
      name,
      tokenHash: hashSecret(token),
      createdAt: clock.now(),
      lastUsedAt: null,
    };
    await repos.apiTokens.insert(row);
    return { ...tokenView(row), token };
  }

  async function signIn(user: UserRow, input: Credentials): Promise<SignedIn> {
    if (input.issueToken) {
      return { user: userView(user), token: await issueApiToken(user.id, input.tokenName ?? "CLI") };
    }
    return { user: userView(user), session: await newSession(user) };
  }

  async function newSession(user: UserRow): Promise<NonNullable<SignedIn["session"]>> {
    const value = newSecret("ses");
    const now = clock.now();
    await repos.sessions.insert({
      id: hashSecret(value),
      userId: user.id,
      createdAt: now,
      expiresAt: now + sessionMaxAgeMs,
    });
    return { value, maxAgeSeconds: sessionMaxAgeMs / 1000 };
  }

  return {
    async serverInfo(): Promise<ServerInfo> {
      const users = await repos.users.count();
      return {
        version,
        setupRequired: users === 0,
        registrationOpen: users === 0 || allowRegistration,
        deploymentsKept,
      };
    },

    /** The first account becomes admin. With ALLOW_REGISTRATION=false only that first account may register. */
    async register(input: Credentials, clientAddress: string): Promise<SignedIn> {
      const keys = [`register:${clientAddress}`];
      await throttle(keys);
      await limiter.record(keys);
      const users = await repos.users.count();
      if (users > 0 && !allowRegistration) throw new AppError("registration_closed");
      if (await repos.users.findByEmail(input.email)) {
        throw new AppError("conflict", "An account with this email already exists");
      }
      const now = clock.now();
      const user: UserRow = {
        id: newId(idPrefixes.user),
        email: input.email,
        passwordHash: await hashPassword(input.password),
        role: users === 0 ? "admin" : "member",
        createdAt: now,
        updatedAt: now,
      };
      try {
        await repos.users.insert(user);
      } catch (error) {
        if (await repos.users.findByEmail(input.email)) {
          throw new AppError("conflict", "An account with this email already exists");
        }
        throw error;
      }
      await bus.publish("user.registered", { userId: user.id, role: user.role });
      return signIn(user, input);
    },

    async login(input: Credentials, clientAddress: string): Promise<SignedIn> {
      const keys = [`login-ip:${clientAddress}`, `login-account:${input.email}`];
      await throttle(keys);
      const user = await repos.users.findByEmail(input.email);
      let valid = false;
      if (user) valid = await verifyPassword(input.password, user.passwordHash);
      else await burnPasswordCheck(input.password);
      if (!user || !valid) {
        await limiter.record(keys);
        throw new AppError("invalid_credentials");
      }
      await limiter.clear(`login-account:${input.email}`);
      return signIn(user, input);
    },

    /** A session for an admin account, for a checked one-time sign-in link; null for anyone else. */
    async signInByLink(email: string): Promise<SignedIn | null> {
      const user = await repos.users.findByEmail(email);
      if (user?.role !== "admin") return null;
      return { user: userView(user), session: await newSession(user) };
    },

    async logout(principal: Principal): Promise<void> {
      if (principal.via === "session") await repos.sessions.delete(principal.credentialId);
      else await repos.apiTokens.deleteForUser(principal.user.id, principal.credentialId);
      await revoke({ kind: "credential", credentialId: principal.credentialId });
    },

    async authenticateSession(cookieValue: string): Promise<Principal | null> {
      const id = hashSecret(cookieValue);
      const user = await repos.sessions.findUser(id, clock.now());
      return user ? { user, via: "session", credentialId: id } : null;
    },

    async authenticateToken(token: string): Promise<Principal | null> {
      const found = await repos.apiTokens.findByHash(hashSecret(token));
      if (!found) return null;
      const now = clock.now();
      if (found.tokenLastUsedAt === null || now - found.tokenLastUsedAt > tokenLastUsedResolutionMs) {
        await repos.apiTokens.touch(found.tokenId, now);
      }
      return { user: found.user, via: "token", credentialId: found.tokenId };
    },

    /** Ends every other session of the user; API tokens stay valid (revoke them separately). */
    async changePassword(principal: Principal, currentPassword: string, newPassword: string): Promise<void> {
      if (!(await verifyPassword(currentPassword, principal.user.passwordHash))) {
        throw new AppError("invalid_credentials", "The current password is wrong");
      }
      await repos.users.updatePassword(principal.user.id, await hashPassword(newPassword), clock.now());
      await repos.sessions.deleteOthers(
        principal.user.id,
        principal.via === "session" ? principal.credentialId : null,
      );
      // Sessions elsewhere end; API tokens stay valid, so only session-based connections close.
      await revoke({
        kind: "user",
        userId: principal.user.id,
        exceptCredentialId: principal.credentialId,
        sessionsOnly: true,
      });
      await bus.publish("user.password_changed", { userId: principal.user.id });
    },

    listTokens: async (principal: Principal) =>
      (await repos.apiTokens.listForUser(principal.user.id)).map(tokenView),

    async createToken(principal: Principal, name: string): Promise<CreatedApiToken> {
      const created = await issueApiToken(principal.user.id, name);
      await bus.publish("token.created", { actorId: principal.user.id, tokenId: created.id, name });
      return created;
    },

    async revokeToken(principal: Principal, tokenId: string): Promise<void> {
      if (!(await repos.apiTokens.deleteForUser(principal.user.id, tokenId)))
        throw new AppError("not_found", "No such API token");
      await revoke({ kind: "credential", credentialId: tokenId });
      await bus.publish("token.revoked", { actorId: principal.user.id, tokenId });
    },

    purgeExpiredSessions: () => repos.sessions.deleteExpired(clock.now()),
  };
}
export type AuthService = ReturnType<typeof authService>;
