import { api } from "../api.ts";
import { AuthForm } from "../components/AuthForm.tsx";
import { useTitle } from "../hooks/useTitle.ts";
import { navigate } from "../router.tsx";
import { useSession } from "../session.tsx";

/** First run: the server has no accounts; the first one becomes the admin. */
export function SetupPage() {
  const { refresh } = useSession();
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
      <AuthForm
        submitLabel="Create admin account"
        newPassword
        onSubmit={async (credentials) => {
          await api.register({ body: credentials });
          await refresh();
          navigate("/", { replace: true });
        }}
      />
    </>
  );
}
