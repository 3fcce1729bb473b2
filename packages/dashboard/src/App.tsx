import { useEffect, useRef } from "react";
import { ErrorMessage } from "./components/ErrorMessage.tsx";
import { Loading } from "./components/Feedback.tsx";
import { AppLayout, AuthLayout } from "./components/Layout.tsx";
import { AccountPage } from "./pages/AccountPage.tsx";
import { AdminPage } from "./pages/AdminPage.tsx";
import { DevicePage } from "./pages/DevicePage.tsx";
import { LoginPage } from "./pages/LoginPage.tsx";
import { NotFoundPage } from "./pages/NotFoundPage.tsx";
import { ProjectPage } from "./pages/ProjectPage.tsx";
import { ProjectsPage } from "./pages/ProjectsPage.tsx";
import { RegisterPage } from "./pages/RegisterPage.tsx";
import { SetupPage } from "./pages/SetupPage.tsx";
import { matchRoute, Redirect, type Route, useLocation } from "./router.tsx";
import { useSession } from "./session.tsx";

const publicRoutes = new Set<Route["name"]>(["login", "register", "setup"]);

/** After a navigation, move focus to the new page's heading so keyboard and screen reader users follow. */
function useFocusOnNavigate(path: string) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const heading = document.getElementById("page-title") ?? document.getElementById("main");
    heading?.focus({ preventScroll: true });
  }, [path]);
}

/** A `next` that stays on this site (no `//evil.example`). */
function safeNext(next: string | null): string {
  return next?.startsWith("/") && !next.startsWith("//") ? next : "/";
}

function SignedInPage({ route }: { route: Route }) {
  switch (route.name) {
    case "projects":
      return <ProjectsPage />;
    case "project":
      return <ProjectPage projectId={route.projectId} />;
    case "device":
      return <DevicePage projectId={route.projectId} deviceId={route.deviceId} />;
    case "account":
      return <AccountPage />;
    case "admin":
      return <AdminPage />;
    default:
      return <NotFoundPage />;
  }
}

export function App() {
  const { state, refresh } = useSession();
  const { path, search, href } = useLocation();
  const route = matchRoute(path);
  useFocusOnNavigate(path);

  if (state.status === "loading")
    return (
      <AuthLayout>
        <Loading what="the dashboard" />
      </AuthLayout>
    );
  if (state.status === "error")
    return (
      <AuthLayout>
        <h1>The server could not be reached</h1>
        <ErrorMessage error={state.error} onRetry={() => void refresh()} />
      </AuthLayout>
    );

  const { server, user } = state;
  if (server.setupRequired && route.name !== "setup") return <Redirect to="/setup" />;

  if (publicRoutes.has(route.name)) {
    if (route.name === "setup" && !server.setupRequired) return <Redirect to={user ? "/" : "/login"} />;
    if (user) return <Redirect to={safeNext(search.get("next"))} />;
    return (
      <AuthLayout>
        {route.name === "setup" ? (
          <SetupPage />
        ) : route.name === "register" ? (
          <RegisterPage />
        ) : (
          <LoginPage next={safeNext(search.get("next"))} ended={state.ended} />
        )}
      </AuthLayout>
    );
  }

  if (!user) {
    const next = href === "/" ? "" : `?next=${encodeURIComponent(href)}`;
    return <Redirect to={`/login${next}`} />;
  }
  return (
    <AppLayout>
      <SignedInPage route={route} />
    </AppLayout>
  );
}
