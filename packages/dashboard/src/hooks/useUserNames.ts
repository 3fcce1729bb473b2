import { useCallback } from "react";
import { api } from "../api.ts";
import { useUser } from "../session.tsx";
import { useLoad } from "./useLoad.ts";

/**
 * Turns a user id into words: "you", or (for admins, who may list users) an email. Others see a
 * shortened id: the API gives only ids for owners, authors and audit actors.
 */
export function useUserNames(): (userId: string | null) => string {
  const me = useUser();
  const users = useLoad(async () => (me.role === "admin" ? await api.listUsers() : []), [me.id, me.role]);
  const emails = new Map((users.data ?? []).map((u) => [u.id, u.email]));
  const key = [...emails.keys()].join();
  return useCallback(
    (userId: string | null) => {
      if (!userId) return "—";
      if (userId === me.id) return "you";
      return emails.get(userId) ?? `user ${userId.slice(0, 10)}…`;
    },
    [key, me.id],
  );
}
