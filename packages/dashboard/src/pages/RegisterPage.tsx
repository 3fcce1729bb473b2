import { SignUpForm } from "../components/AuthForm.tsx";
import { useTitle } from "../hooks/useTitle.ts";
import { Link } from "../router.tsx";
import { useServerInfo } from "../session.tsx";

export function RegisterPage() {
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
      <SignUpForm submitLabel="Create account" />
      <p className="auth-switch">
        Already have an account? <Link to="/login">Sign in</Link>
      </p>
    </>
  );
}
