import type { Role, User } from "@sdk/protocol";
import { api } from "../../api.ts";
import { Form } from "../Form.tsx";

export const roleOptions = [
  { value: "member", label: "Member" },
  { value: "admin", label: "Admin" },
] as const satisfies readonly { value: Role; label: string }[];

/** Adds an account directly (it works while sign-up is closed); the admin passes the password on. */
export function AddUserForm({ onAdded }: { onAdded: (user: User) => void }) {
  return (
    <Form
      title="Add a user"
      fields={[
        { name: "email", label: "Email", type: "email", required: true, autoComplete: "off", grow: true },
        {
          name: "password",
          label: "Password",
          type: "password",
          required: true,
          minLength: 8,
          maxLength: 256,
          autoComplete: "new-password",
          grow: true,
        },
        { name: "role", label: "Role", type: "select", options: roleOptions },
      ]}
      submitLabel="Add user"
      busyLabel="Adding…"
      clearOnSuccess={["email", "password"]}
      onSubmit={async ({ email, password, role }) => {
        const user = await api.createUser({ body: { email, password, role: role as Role } });
        onAdded(user);
        return `${user.email} can now sign in with the password you chose. Ask them to change it on their Account page.`;
      }}
    />
  );
}
