import { api } from "../../api.ts";
import { newPasswordFields } from "../AuthForm.tsx";
import { Form } from "../Form.tsx";

export function PasswordForm() {
  return (
    <section className="card section" aria-labelledby="password-title">
      <h2 id="password-title">Change password</h2>
      <Form
        layout="stacked"
        className="form narrow"
        fields={[
          {
            name: "current",
            label: "Current password",
            type: "password",
            autoComplete: "current-password",
            required: true,
          },
          ...newPasswordFields("next", "repeat", {
            label: "New password",
            hint: "At least 8 characters. Your other sessions are signed out; this one stays.",
            repeatLabel: "Repeat the new password",
            mismatch: "The two new passwords are not the same.",
          }),
        ]}
        submitLabel="Change password"
        busyLabel="Changing…"
        clearOnSuccess={["current", "next", "repeat"]}
        onSubmit={async ({ current, next }) => {
          await api.changePassword({ body: { currentPassword: current, newPassword: next } });
          return "Your password was changed.";
        }}
      />
    </section>
  );
}
