import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { useAction } from "../hooks/useAction.ts";
import { ErrorMessage } from "./ErrorMessage.tsx";

interface ConfirmButtonProps {
  /** The button that opens the dialog. */
  label: string;
  /** Spoken name of the button when `label` alone is ambiguous ("Delete Sensor 1"). */
  ariaLabel?: string;
  title: string;
  confirmLabel: string;
  /** Runs on confirm; the dialog closes when it resolves and shows the error when it throws. */
  onConfirm: () => Promise<unknown>;
  children: ReactNode;
  className?: string;
  /** The button cannot be used now; `disabledReason` says why (its tooltip). */
  disabled?: boolean;
  disabledReason?: string;
}

/** A button that asks first, in a modal dialog (focus stays inside; Escape cancels). */
export function ConfirmButton({
  label,
  ariaLabel,
  className,
  disabled,
  disabledReason,
  ...dialog
}: ConfirmButtonProps) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className={className ?? "button-danger button-small"}
        aria-label={ariaLabel}
        disabled={disabled}
        title={disabled ? disabledReason : undefined}
        onClick={() => setOpen(true)}
      >
        {label}
      </button>
      {open && <ConfirmDialog {...dialog} onClose={() => setOpen(false)} />}
    </>
  );
}

function ConfirmDialog({
  title,
  confirmLabel,
  onConfirm,
  children,
  onClose,
}: Omit<ConfirmButtonProps, "label" | "ariaLabel" | "className" | "disabled" | "disabledReason"> & {
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const id = useId();
  const action = useAction(async () => {
    await onConfirm();
    return true;
  });

  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    dialog.showModal();
    cancel.current?.focus();
    return () => dialog.close();
  }, []);

  const confirm = async () => {
    if (await action.run()) onClose();
  };

  return (
    <dialog
      ref={ref}
      className="dialog"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      onCancel={(event) => {
        event.preventDefault();
        if (!action.busy) onClose();
      }}
    >
      <h2 id={`${id}-title`}>{title}</h2>
      <div id={`${id}-body`} className="dialog-body">
        {children}
      </div>
      {action.error != null && <ErrorMessage error={action.error} />}
      <div className="dialog-actions">
        <button type="button" ref={cancel} onClick={onClose} disabled={action.busy}>
          Cancel
        </button>
        <button type="button" className="button-danger" onClick={confirm} disabled={action.busy}>
          {action.busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
