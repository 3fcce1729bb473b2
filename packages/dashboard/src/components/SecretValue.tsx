import { useId, useState } from "react";

/** A value to copy (a secret shown once, a command): selectable text and a Copy button. */
export function SecretValue({ label, value, testId }: { label: string; value: string; testId?: string }) {
  const id = useId();
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("yes");
    } catch {
      // Clipboard access needs HTTPS or localhost: select the text so Ctrl+C works.
      const range = document.createRange();
      const node = document.getElementById(id);
      if (node) {
        range.selectNodeContents(node);
        getSelection()?.removeAllRanges();
        getSelection()?.addRange(range);
      }
      setCopied("no");
    }
  };
  return (
    <div className="secret">
      <span className="secret-label" id={`${id}-label`}>
        {label}
      </span>
      <div className="secret-row">
        <code id={id} className="secret-value" data-testid={testId}>
          {value}
        </code>
        <button type="button" className="button-small" onClick={copy} aria-label={`Copy ${label}`}>
          Copy
        </button>
      </div>
      <span className="secret-copied" role="status">
        {copied === "yes" ? "Copied." : copied === "no" ? "Selected: press Ctrl+C (or ⌘C) to copy." : ""}
      </span>
    </div>
  );
}
