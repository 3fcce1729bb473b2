import type { Role, User } from "@sdk/protocol";
import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Success } from "../Feedback.tsx";

/** Adds an account directly (it works while sign-up is closed); the admin passes the password on. */
export function AddUserForm({ onAdded }: { onAdded: (user: User) => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [added, setAdded] = useState<string | null>(null);
  const add = useAction(async () => {
    const user = await api.createUser({ body: { email, password, role } });
    onAdded(user);
    setAdded(
      `${user.email} can now sign in with the password you chose. Ask them to change it on their Account page.`,
    );
    setEmail("");
    setPassword("");
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setAdded(null);
    void add.run();
  };

  return (
    <form className="form subcard" onSubmit={submit} aria-labelledby="add-user-title">
      <h3 id="add-user-title">Add a user</h3>
      {add.error != null && <ErrorMessage error={add.error} />}
      {added && <Success>{added}</Success>}
      <div className="inline-fields">
        <div className="field grow">
          <label htmlFor="add-user-email">Email</label>
          <input
            id="add-user-email"
            type="email"
            required
            autoComplete="off"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </div>
        <div className="field grow">
          <label htmlFor="add-user-password">Password</label>
          <input
            id="add-user-password"
            type="password"
            required
            minLength={8}
            maxLength={256}
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="add-user-role">Role</label>
          <select id="add-user-role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            <option value="member">Member</option>
            <option value="admin">Admin</option>
          </select>
        </div>
        <button type="submit" className="button-primary" disabled={add.busy}>
          {add.busy ? "Adding…" : "Add user"}
        </button>
      </div>
    </form>
  );
}
