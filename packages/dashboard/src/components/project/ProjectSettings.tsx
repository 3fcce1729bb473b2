import type { Project } from "@sdk/protocol";
import { useState } from "react";
import { api } from "../../api.ts";
import { navigate } from "../../router.tsx";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { Form } from "../Form.tsx";

/** Rename and delete, beside the project's title. */
export function ProjectActions({
  project,
  onRenamed,
}: {
  project: Project;
  onRenamed: (project: Project) => void;
}) {
  const [renaming, setRenaming] = useState(false);

  if (renaming) {
    return (
      <Form
        className="form rename-form"
        fields={[
          {
            name: "name",
            label: "New name",
            required: true,
            maxLength: 100,
            autoFocus: true,
            initial: project.name,
            grow: true,
          },
        ]}
        submitLabel="Save name"
        busyLabel="Saving…"
        onSubmit={async ({ name }) => {
          onRenamed(await api.renameProject({ params: { projectId: project.id }, body: { name } }));
          setRenaming(false);
        }}
        actions={
          <button type="button" onClick={() => setRenaming(false)}>
            Cancel
          </button>
        }
      />
    );
  }
  return (
    <>
      <button type="button" className="button-small" onClick={() => setRenaming(true)}>
        Rename
      </button>
      <ConfirmButton
        label="Delete project"
        title={`Delete “${project.name}”?`}
        confirmLabel="Delete project"
        onConfirm={async () => {
          await api.deleteProject({ params: { projectId: project.id } });
          navigate("/", { replace: true });
        }}
      >
        Its devices, deployments, environment variables and stored files are removed for good, and its devices
        can no longer connect.
      </ConfirmButton>
    </>
  );
}
