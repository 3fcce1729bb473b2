import { SignUpForm } from "../components/AuthForm.tsx";
import { useTitle } from "../hooks/useTitle.ts";

/** First run: the server has no accounts; the first one becomes the admin. */
export function SetupPage() {
  useTitle("Set up");
  return (
    <>
      <h1 id="page-title" tabIndex={-1}>
        Create the admin account
      </h1>
      <p>
        Welcome! This server has no accounts yet. The account you create now is the{" "}
        <strong>administrator</strong>: it manages users and can see every project.
      </p>
      <SignUpForm submitLabel="Create admin account" />
    </>
  );
}
