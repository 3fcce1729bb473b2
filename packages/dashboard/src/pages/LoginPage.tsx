import { api } from "../api.ts";
import { AuthForm } from "../components/AuthForm.tsx";
import { useTitle } from "../hooks/useTitle.ts";
import { Link, navigate } from "../router.tsx";
import { useServerInfo, useSession } from "../session.tsx";

export function LoginPage({ next, ended }: { next: string; ended: boolean }) {
  const { refresh } = useSession();
  const server = useServerInfo();
  useTitle("Sign in");
  return (
    <>
      <h1 id="page-title" tabIndex={-1}>
        Sign in
      </h1>
      {ended && (
        <p className="notice notice-info" role="status">
          Your session has ended. Please sign in again.
        </p>
      )}
      <AuthForm
        submitLabel="Sign in"
        newPassword={false}
        onSubmit={async (credentials) => {
          await api.login({ body: credentials });
          await refresh();
          navigate(next, { replace: true });
        }}
      />
      {server?.registrationOpen ? (
        <p className="auth-switch">
          No account yet? <Link to="/register">Create an account</Link>
        </p>
      ) : (
        <p className="auth-switch muted">No account yet? Ask the admin of this server to add you.</p>
      )}
    </>
  );
}
