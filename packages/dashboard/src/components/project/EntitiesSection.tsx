import type { EntityConfig } from "@sdk/protocol";
import type { LoadResult } from "../../hooks/useLoad.ts";
import { DataTable } from "../DataTable.tsx";
import { ListSection } from "../ListSection.tsx";

/** The Home Assistant entities that the live deployment declares (ha.entities in sdk.ts). */
export function EntitiesSection({ entities }: { entities: LoadResult<EntityConfig[]> }) {
  return (
    <ListSection
      id="entities"
      title="Home Assistant entities"
      list={entities}
      what="entities"
      empty={{
        title: "No entities",
        body: (
          <>
            The live deployment declares none. List them under <code>ha.entities</code> in <code>sdk.ts</code>
            , then deploy.
          </>
        ),
      }}
    >
      {(list) => (
        <DataTable
          caption="Entities of the live deployment"
          columns={["Name", "Id", "Kind", "Unit", "Device class"]}
        >
          {list.map((entity) => (
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
      )}
    </ListSection>
  );
}
