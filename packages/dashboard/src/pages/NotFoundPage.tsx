import { PageHeader } from "../components/PageHeader.tsx";
import { Link } from "../router.tsx";

/** Also what a project or device the user cannot see looks like (the API answers 404 for both). */
export function NotFoundPage({ what = "page" }: { what?: string }) {
  return (
    <section className="not-found">
      <PageHeader title="Not found" />
      <p>
        This {what} does not exist, or it is not shared with you. Check the address, or go back to{" "}
        <Link to="/">your projects</Link>.
      </p>
    </section>
  );
}
