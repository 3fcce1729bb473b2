import { AuditSection } from "../components/admin/AuditSection.tsx";
import { DiskSection } from "../components/admin/DiskSection.tsx";
import { UsersSection } from "../components/admin/UsersSection.tsx";
import { PageHeader } from "../components/PageHeader.tsx";
import { useServerInfo, useUser } from "../session.tsx";
import { NotFoundPage } from "./NotFoundPage.tsx";

function ServerSection() {
  const server = useServerInfo();
  if (!server) return null;
  return (
    <section className="card section" aria-labelledby="server-title">
      <h2 id="server-title">Server</h2>
      <dl className="facts">
        <div>
          <dt>Version</dt>
          <dd>{server.version}</dd>
        </div>
        <div>
          <dt>Registration</dt>
          <dd data-testid="registration">
            {server.registrationOpen ? (
              <>
                <strong>Open:</strong> anyone who can reach this server can create an account.
              </>
            ) : (
              <>
                <strong>Closed:</strong> no new sign-ups.
              </>
            )}
            <span className="muted small block">
              Set by <code>ALLOW_REGISTRATION</code> when the server starts.
            </span>
          </dd>
        </div>
      </dl>
    </section>
  );
}

export function AdminPage() {
  const user = useUser();
  if (user.role !== "admin") return <NotFoundPage />;
  return (
    <>
      <PageHeader title="Admin" />
      <ServerSection />
      <DiskSection />
      <UsersSection />
      <AuditSection />
    </>
  );
}
