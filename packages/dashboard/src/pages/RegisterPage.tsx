import { api } from "../api.ts";
import { AuthForm } from "../components/AuthForm.tsx";
import { useTitle } from "../hooks/useTitle.ts";
import { Link, navigate } from "../router.tsx";
import { useServerInfo, useSession } from "../session.tsx";

export function RegisterPage() {
  const { refresh } = useSession();
  const server = useServerInfo();
  useTitle("Create an account");
  if (!server?.registrationOpen) {
    return (
      <>
        <h1 id="page-title" tabIndex={-1}>
          Sign-up is closed
        </h1>
        <p>This server does not take new sign-ups. Ask its admin to create an account for you.</p>
        <p className="auth-switch">
          <Link to="/login">Back to sign in</Link>
        </p>
      </>
    );
  }
  return (
    <>
      <h1 id="page-title" tabIndex={-1}>
        Create an account
      </h1>
      <AuthForm
        submitLabel="Create account"
        newPassword
        onSubmit={async (credentials) => {
          await api.register({ body: credentials });
          await refresh();
          navigate("/", { replace: true });
        }}
      />
      <p className="auth-switch">
        Already have an account? <Link to="/login">Sign in</Link>
      </p>
    </>
  );
}
