import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Success } from "../Feedback.tsx";

export function PasswordForm() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [repeat, setRepeat] = useState("");
  const [mismatch, setMismatch] = useState(false);
  const [done, setDone] = useState(false);
  const change = useAction(async () => {
    await api.changePassword({ body: { currentPassword: current, newPassword: next } });
    setCurrent("");
    setNext("");
    setRepeat("");
    setDone(true);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setDone(false);
    if (next !== repeat) {
      setMismatch(true);
      return;
    }
    setMismatch(false);
    void change.run();
  };
  return (
    <section className="card section" aria-labelledby="password-title">
      <h2 id="password-title">Change password</h2>
      <form className="form narrow" onSubmit={submit}>
        <div className="field">
          <label htmlFor="current-password">Current password</label>
          <input
            id="current-password"
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="new-password">New password</label>
          <input
            id="new-password"
            type="password"
            autoComplete="new-password"
            required
            minLength={8}
            aria-describedby="new-password-hint"
            value={next}
            onChange={(e) => setNext(e.target.value)}
          />
          <p className="hint" id="new-password-hint">
            At least 8 characters. Your other sessions are signed out; this one stays.
          </p>
        </div>
        <div className="field">
          <label htmlFor="repeat-password">Repeat the new password</label>
          <input
            id="repeat-password"
            type="password"
            autoComplete="new-password"
            required
            aria-invalid={mismatch || undefined}
            value={repeat}
            onChange={(e) => setRepeat(e.target.value)}
          />
          {mismatch && (
            <p className="field-error" role="alert">
              The two new passwords are not the same.
            </p>
          )}
        </div>
        {change.error != null && <ErrorMessage error={change.error} />}
        {done && <Success>Your password was changed.</Success>}
        <button type="submit" className="button-primary" disabled={change.busy}>
          {change.busy ? "Changing…" : "Change password"}
        </button>
      </form>
    </section>
  );
}
