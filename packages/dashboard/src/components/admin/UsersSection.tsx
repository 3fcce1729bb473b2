import type { Role, User } from "@sdk/protocol";
import { useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { useSession, useUser } from "../../session.tsx";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { DataTable } from "../DataTable.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Success } from "../Feedback.tsx";
import { Options } from "../Form.tsx";
import { ListSection } from "../ListSection.tsx";
import { DateTime } from "../Time.tsx";
import { AddUserForm, roleOptions } from "./AddUserForm.tsx";

/** Every user, with their role (changeable) and deletion. */
export function UsersSection() {
  const me = useUser();
  const { refresh } = useSession();
  const users = useLoad(() => api.listUsers(), []);
  const [changed, setChanged] = useState<string | null>(null);
  const changeRole = useAction(async (user: User, role: Role) => {
    setChanged(null);
    const updated = await api.changeRole({ params: { userId: user.id }, body: { role } });
    users.setData((list) => list.map((u) => (u.id === updated.id ? updated : u)));
    setChanged(`${updated.email} is now ${updated.role === "admin" ? "an admin" : "a member"}.`);
    if (updated.id === me.id) await refresh();
  });

  return (
    <ListSection
      id="users"
      title="Users"
      list={users}
      what="users"
      before={
        <>
          {changeRole.error != null && <ErrorMessage error={changeRole.error} />}
          {changed && <Success>{changed}</Success>}
        </>
      }
      after={
        <AddUserForm
          onAdded={(user) => users.setData((list) => [...list.filter((u) => u.id !== user.id), user])}
        />
      }
    >
      {(list) => (
        <DataTable caption="All users of this server" columns={["Email", "Role", "Joined"]} actions>
          {list.map((user) => (
            <tr key={user.id}>
              <td data-label="Email">
                {user.email}
                {user.id === me.id && <span className="muted small"> (you)</span>}
              </td>
              <td data-label="Role">
                <select
                  aria-label={`Role of ${user.email}`}
                  value={user.role}
                  disabled={changeRole.busy}
                  onChange={(e) => void changeRole.run(user, e.target.value as Role)}
                >
                  <Options choices={roleOptions} />
                </select>
              </td>
              <td data-label="Joined">
                <DateTime iso={user.createdAt} />
              </td>
              <td data-label="Actions" className="actions">
                {user.id !== me.id && (
                  <ConfirmButton
                    label="Delete"
                    ariaLabel={`Delete ${user.email}`}
                    title={`Delete ${user.email}?`}
                    confirmLabel="Delete user"
                    onConfirm={async () => {
                      await api.deleteUser({ params: { userId: user.id } });
                      users.setData((items) => items.filter((u) => u.id !== user.id));
                    }}
                  >
                    Their projects, devices, tokens and sessions are deleted with them. This cannot be undone.
                  </ConfirmButton>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </ListSection>
  );
}
