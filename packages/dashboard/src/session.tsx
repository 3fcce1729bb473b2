import type { ServerInfo, User } from "@sdk/protocol";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from "react";
import { api, isSessionEnded, onSessionEnded } from "./api.ts";

export type SessionState =
  | { status: "loading" }
  | { status: "error"; error: unknown }
  | { status: "ready"; server: ServerInfo; user: User | null; ended: boolean };

interface Session {
  state: SessionState;
  signOut(): Promise<void>;
  /** Reads /v1/server and /v1/auth/me again (after sign-in or sign-up, too). */
  refresh(): Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

async function loadSession(): Promise<{ server: ServerInfo; user: User | null }> {
  const [server, user] = await Promise.all([
    api.serverInfo(),
    api.whoami().catch((error: unknown) => {
      if (isSessionEnded(error)) return null;
      throw error;
    }),
  ]);
  return { server, user };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<SessionState>({ status: "loading" });

  const refresh = useCallback(async () => {
    try {
      const { server, user } = await loadSession();
      setState({ status: "ready", server, user, ended: false });
    } catch (error) {
      setState({ status: "error", error });
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  // Any call that finds the session gone signs the user out here too.
  useEffect(
    () =>
      onSessionEnded(() =>
        setState((s) => (s.status === "ready" && s.user ? { ...s, user: null, ended: true } : s)),
      ),
    [],
  );

  const signOut = useCallback(async () => {
    try {
      await api.logout();
    } finally {
      setState((s) => (s.status === "ready" ? { ...s, user: null, ended: false } : s));
    }
  }, []);

  return <SessionContext.Provider value={{ state, signOut, refresh }}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}

/** The signed-in user (only inside pages that require one). */
export function useUser(): User {
  const { state } = useSession();
  if (state.status !== "ready" || !state.user) throw new Error("useUser without a signed-in user");
  return state.user;
}

export function useServerInfo(): ServerInfo | null {
  const { state } = useSession();
  return state.status === "ready" ? state.server : null;
}
