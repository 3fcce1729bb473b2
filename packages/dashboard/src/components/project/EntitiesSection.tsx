import type { EntityConfigSchema } from "@sdk/protocol";
import type { LoadResult } from "../../hooks/useLoad.ts";
import { DataTable } from "../DataTable.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";
import { Empty, Loading } from "../Feedback.tsx";

/** The Home Assistant entities that the live deployment declares (ha.entities in sdk.ts). */
export function EntitiesSection({ entities }: { entities: LoadResult<EntityConfigSchema[]> }) {
  return (
    <section className="card section" aria-labelledby="entities-title">
      <h2 id="entities-title">Home Assistant entities</h2>
      {entities.status === "loading" && <Loading what="entities" />}
      {entities.status === "error" && <ErrorMessage error={entities.error} onRetry={entities.reload} />}
      {entities.status === "ready" &&
        (entities.data.length === 0 ? (
          <Empty title="No entities">
            The live deployment declares none. List them under <code>ha.entities</code> in <code>sdk.ts</code>
            , then deploy.
          </Empty>
        ) : (
          <DataTable
            caption="Entities of the live deployment"
            columns={["Name", "Id", "Kind", "Unit", "Device class"]}
          >
            {entities.data.map((entity) => (
              <tr key={entity.id}>
                <td data-label="Name">{entity.name}</td>
                <td data-label="Id">
                  <code>{entity.id}</code>
                </td>
                <td data-label="Kind">{entity.kind}</td>
                <td data-label="Unit">{entity.unit ?? "—"}</td>
                <td data-label="Device class">{entity.deviceClass ?? "—"}</td>
              </tr>
            ))}
          </DataTable>
        ))}
    </section>
  );
}
