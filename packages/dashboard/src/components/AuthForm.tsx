import { api } from "../api.ts";
import { navigate } from "../router.tsx";
import { useSession } from "../session.tsx";
import { type Field, Form } from "./Form.tsx";

export interface Credentials {
  email: string;
  password: string;
}

/** A new password and its repeat, checked to be the same before anything is sent. */
export function newPasswordFields<K extends string>(
  password: K,
  repeat: K,
  words: { label: string; hint: string; repeatLabel: string; mismatch: string },
): Field<K>[] {
  const secret = { type: "password", autoComplete: "new-password", required: true } as const;
  return [
    { name: password, label: words.label, ...secret, minLength: 8, hint: words.hint },
    {
      name: repeat,
      label: words.repeatLabel,
      ...secret,
      validate: (value, values) => (value === values[password] ? null : words.mismatch),
    },
  ];
}

/**
 * Email and password, for sign-in (`newPassword` false) or for a new account (with a repeat of
 * the password, checked here before anything is sent).
 */
export function AuthForm({
  submitLabel,
  newPassword,
  onSubmit,
}: {
  submitLabel: string;
  newPassword: boolean;
  onSubmit: (credentials: Credentials) => Promise<void>;
}) {
  const fields: Field<"email" | "password" | "repeat">[] = [
    {
      name: "email",
      label: "Email",
      type: "email",
      autoComplete: newPassword ? "username" : "email",
      required: true,
    },
    ...(newPassword
      ? newPasswordFields("password", "repeat", {
          label: "Password",
          hint: "At least 8 characters. A few unrelated words make a strong password.",
          repeatLabel: "Repeat the password",
          mismatch: "The two passwords are not the same.",
        })
      : [
          {
            name: "password",
            label: "Password",
            type: "password",
            autoComplete: "current-password",
            required: true,
          } as const,
        ]),
  ];
  return (
    <Form
      layout="stacked"
      className="form"
      wideButton
      fields={fields}
      submitLabel={submitLabel}
      busyLabel="Please wait…"
      onSubmit={({ email, password }) => onSubmit({ email, password })}
    />
  );
}

/** A new account (the admin's on first run), then the projects page, signed in. */
export function SignUpForm({ submitLabel }: { submitLabel: string }) {
  const { refresh } = useSession();
  return (
    <AuthForm
      submitLabel={submitLabel}
      newPassword
      onSubmit={async (credentials) => {
        await api.register({ body: credentials });
        await refresh();
        navigate("/", { replace: true });
      }}
    />
  );
}
