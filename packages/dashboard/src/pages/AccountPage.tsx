import { PasswordForm } from "../components/account/PasswordForm.tsx";
import { TokensSection } from "../components/account/TokensSection.tsx";
import { PageHeader } from "../components/PageHeader.tsx";
import { DateTime } from "../components/Time.tsx";
import { useUser } from "../session.tsx";

export function AccountPage() {
  const user = useUser();
  return (
    <>
      <PageHeader title="Account">
        <p className="muted">
          Signed in as <strong>{user.email}</strong> ({user.role === "admin" ? "administrator" : "member"}) ·
          since <DateTime iso={user.createdAt} />
        </p>
      </PageHeader>
      <PasswordForm />
      <TokensSection />
    </>
  );
}
