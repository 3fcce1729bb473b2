import type { Project } from "@sdk/protocol";
import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { useAction } from "../../hooks/useAction.ts";
import { navigate } from "../../router.tsx";
import { ConfirmButton } from "../ConfirmButton.tsx";
import { ErrorMessage } from "../ErrorMessage.tsx";

/** Rename and delete, beside the project's title. */
export function ProjectActions({
  project,
  onRenamed,
}: {
  project: Project;
  onRenamed: (project: Project) => void;
}) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(project.name);
  const rename = useAction(async () => {
    const renamed = await api.renameProject({ params: { projectId: project.id }, body: { name } });
    onRenamed(renamed);
    setRenaming(false);
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void rename.run();
  };

  if (renaming) {
    return (
      <form className="form rename-form" onSubmit={submit}>
        <div className="inline-fields">
          <div className="field grow">
            <label htmlFor="rename-project">New name</label>
            <input
              id="rename-project"
              required
              maxLength={100}
              // biome-ignore lint/a11y/noAutofocus: the user just asked to rename; the field is what they want
              autoFocus
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          </div>
          <button type="submit" className="button-primary" disabled={rename.busy}>
            Save name
          </button>
          <button
            type="button"
            onClick={() => {
              setRenaming(false);
              rename.clear();
            }}
          >
            Cancel
          </button>
        </div>
        {rename.error != null && <ErrorMessage error={rename.error} />}
      </form>
    );
  }
  return (
    <>
      <button
        type="button"
        className="button-small"
        onClick={() => {
          setName(project.name);
          setRenaming(true);
        }}
      >
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
