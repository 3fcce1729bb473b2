import type { AuditEntry } from "@sdk/protocol";
import { useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { useLoad } from "../../hooks/useLoad.ts";
import { useUserNames } from "../../hooks/useUserNames.ts";
import { Link, paths } from "../../router.tsx";
import { DataTable } from "../DataTable.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { ListSection } from "../ListSection.tsx";
import { DateTime } from "../Time.tsx";

const pageSize = 50;

function detailText(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(", ");
}

/** The audit log, newest first, a page at a time. */
export function AuditSection() {
  const userName = useUserNames();
  const first = useLoad(() => api.listAudit({ query: { limit: pageSize } }), []);
  // Admins see every project: name them (a deleted project keeps its id).
  const projects = useLoad(() => api.listProjects(), []);
  const projectNames = new Map((projects.data ?? []).map((p) => [p.id, p.name]));
  const [older, setOlder] = useState<AuditEntry[]>([]);
  const [exhausted, setExhausted] = useState(false);
  const entries = [...(first.data ?? []), ...older];
  const loadOlder = useAction(async () => {
    const last = entries[entries.length - 1];
    const page = await api.listAudit({ query: { limit: pageSize, before: last?.id } });
    setOlder((o) => [...o, ...page]);
    if (page.length < pageSize) setExhausted(true);
  });

  return (
    <ListSection
      id="audit"
      title="Audit log"
      list={first}
      what="the audit log"
      empty={{ title: "Nothing recorded yet" }}
    >
      {(firstPage) => (
        <>
          <DataTable
            caption="Audit log, newest first"
            columns={["When", "Who", "What", "Project", "Details"]}
          >
            {entries.map((entry) => (
              <tr key={entry.id}>
                <td data-label="When">
                  <DateTime iso={entry.at} />
                </td>
                <td data-label="Who">{entry.actorId ? userName(entry.actorId) : "system"}</td>
                <td data-label="What">
                  <code>{entry.action}</code>
                  {entry.targetId && <span className="muted small block">{entry.targetId}</span>}
                </td>
                <td data-label="Project">
                  {entry.projectId ? (
                    projectNames.has(entry.projectId) ? (
                      <Link to={paths.project(entry.projectId)}>{projectNames.get(entry.projectId)}</Link>
                    ) : (
                      <code>{entry.projectId}</code>
                    )
                  ) : (
                    "—"
                  )}
                </td>
                <td data-label="Details" className="small wrap">
                  {detailText(entry.detail) || "—"}
                </td>
              </tr>
            ))}
          </DataTable>
          {loadOlder.error != null && <ErrorMessage error={loadOlder.error} />}
          {!exhausted && firstPage.length === pageSize && (
            <button type="button" onClick={() => void loadOlder.run()} disabled={loadOlder.busy}>
              {loadOlder.busy ? "Loading…" : "Load older entries"}
            </button>
          )}
        </>
      )}
    </ListSection>
  );
}
