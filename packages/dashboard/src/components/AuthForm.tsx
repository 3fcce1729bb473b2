import { type FormEvent, useState } from "react";
import { useAction } from "../hooks/useAction.ts";
import { ErrorMessage } from "./ErrorMessage.tsx";

export interface Credentials {
  email: string;
  password: string;
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
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [mismatch, setMismatch] = useState(false);
  const action = useAction(onSubmit);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (newPassword && password !== repeat) {
      setMismatch(true);
      return;
    }
    setMismatch(false);
    void action.run({ email, password });
  };

  return (
    <form className="form" onSubmit={submit}>
      <div className="field">
        <label htmlFor="auth-email">Email</label>
        <input
          id="auth-email"
          type="email"
          autoComplete={newPassword ? "username" : "email"}
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="auth-password">Password</label>
        <input
          id="auth-password"
          type="password"
          autoComplete={newPassword ? "new-password" : "current-password"}
          required
          minLength={newPassword ? 8 : undefined}
          aria-describedby={newPassword ? "auth-password-hint" : undefined}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {newPassword && (
          <p className="hint" id="auth-password-hint">
            At least 8 characters. A few unrelated words make a strong password.
          </p>
        )}
      </div>
      {newPassword && (
        <div className="field">
          <label htmlFor="auth-repeat">Repeat the password</label>
          <input
            id="auth-repeat"
            type="password"
            autoComplete="new-password"
            required
            aria-invalid={mismatch || undefined}
            aria-describedby={mismatch ? "auth-repeat-error" : undefined}
            value={repeat}
            onChange={(e) => setRepeat(e.target.value)}
          />
          {mismatch && (
            <p className="field-error" id="auth-repeat-error" role="alert">
              The two passwords are not the same.
            </p>
          )}
        </div>
      )}
      {action.error != null && <ErrorMessage error={action.error} />}
      <button type="submit" className="button-primary button-block" disabled={action.busy}>
        {action.busy ? "Please wait…" : submitLabel}
      </button>
    </form>
  );
}
