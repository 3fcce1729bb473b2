import type { ReactNode } from "react";
import { Link, useLocation } from "../router.tsx";
import { useServerInfo, useSession, useUser } from "../session.tsx";
import { DiskLowBanner } from "./DiskLowBanner.tsx";

function NavLink({ to, children, current }: { to: string; children: ReactNode; current: boolean }) {
  return (
    <Link to={to} aria-current={current ? "page" : undefined}>
      {children}
    </Link>
  );
}

function Footer() {
  const server = useServerInfo();
  return (
    <footer className="footer">
      <span>sdk {server?.version}</span>
      <a href="/docs">Documentation</a>
      <a href="/docs/api">API reference</a>
      <a href="/docs/errors">Error codes</a>
    </footer>
  );
}

/** Pages for signed-in users: the top bar with navigation, the page, the footer. */
export function AppLayout({ children }: { children: ReactNode }) {
  const user = useUser();
  const { signOut } = useSession();
  const { path } = useLocation();
  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <div className="topbar-inner">
          <Link to="/" className="brand">
            <span className="brand-mark" aria-hidden="true" />
            sdk
          </Link>
          <nav aria-label="Main" className="mainnav">
            <NavLink to="/" current={path === "/" || path.startsWith("/projects/")}>
              Projects
            </NavLink>
            <NavLink to="/account" current={path === "/account"}>
              Account
            </NavLink>
            {user.role === "admin" && (
              <NavLink to="/admin" current={path === "/admin"}>
                Admin
              </NavLink>
            )}
          </nav>
          <div className="topbar-user">
            <span className="topbar-email" title={user.email}>
              {user.email}
            </span>
            <button type="button" className="button-small" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" className="main" tabIndex={-1}>
        <DiskLowBanner />
        {children}
      </main>
      <Footer />
    </div>
  );
}

/** Sign-in, sign-up and setup: one centred card. */
export function AuthLayout({ children }: { children: ReactNode }) {
  return (
    <div className="app app-auth">
      <main id="main" className="auth-main" tabIndex={-1}>
        <p className="brand brand-large">
          <span className="brand-mark" aria-hidden="true" />
          sdk
        </p>
        <div className="card auth-card">{children}</div>
      </main>
      <Footer />
    </div>
  );
}
