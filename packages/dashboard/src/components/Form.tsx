import { type FormEvent, type ReactNode, useId, useState } from "react";
import { useAction } from "../hooks/useAction.ts";
import { ErrorMessage } from "./ErrorMessage.tsx";
import { Success } from "./Feedback.tsx";

export type FieldValues<K extends string> = Record<K, string>;

/** One field of a `Form`, as data: what the user sees, and what the browser checks before sending. */
export interface Field<K extends string> {
  name: K;
  label: string;
  type?: "text" | "email" | "password" | "select" | "textarea";
  /** For `select`. */
  options?: readonly { value: string; label: string }[];
  initial?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: RegExp;
  placeholder?: string;
  autoComplete?: string;
  /** Typed words that are not prose (names, JSON): no spell check, and upper case on phones for names. */
  code?: boolean | "upper-case";
  autoFocus?: boolean;
  /** For `textarea`. */
  rows?: number;
  /** A line under the field, read out with it. */
  hint?: ReactNode;
  /** Takes the free width of an inline form. */
  grow?: boolean;
  /** Checked on submit before anything is sent: what is wrong, said at the field, or null. */
  validate?: (value: string, values: FieldValues<K>) => string | null;
}

interface FormProps<K extends string> {
  fields: readonly Field<K>[];
  submitLabel: string;
  /** The button's words while the submit runs ("Creating…"). */
  busyLabel: string;
  /**
   * Runs on submit with the field values; a string it returns is shown as a confirmation, and
   * an error it throws is shown in plain words.
   */
  onSubmit: (values: FieldValues<K>) => Promise<unknown>;
  /** Fields emptied after a successful submit. */
  clearOnSuccess?: readonly K[];
  /** A heading at the top of the form, which also names the form. */
  title?: string;
  titleLevel?: 2 | 3;
  /** `inline`: the fields and the button on one row (create forms); `stacked`: one under another. */
  layout?: "inline" | "stacked";
  className?: string;
  /** A paragraph after the fields, read out with the field named by `noteFor`. */
  note?: ReactNode;
  noteFor?: K;
  /** More buttons beside the submit button (Cancel). */
  actions?: ReactNode;
  /** The submit button spans the form (sign-in and sign-up). */
  wideButton?: boolean;
}

/** The `<option>`s of a select, from data. */
export function Options({ choices }: { choices: readonly { value: string; label: string }[] }) {
  return choices.map((choice) => (
    <option key={choice.value} value={choice.value}>
      {choice.label}
    </option>
  ));
}

const initialValues = <K extends string>(fields: readonly Field<K>[]) =>
  Object.fromEntries(fields.map((f) => [f.name, f.initial ?? f.options?.[0]?.value ?? ""])) as FieldValues<K>;

/**
 * A form whose fields are data: labels tied to their inputs, the browser's own checks
 * (required, lengths, pattern), `validate` checks at the field, a pending button, the server's
 * error in plain words and an optional confirmation.
 */
export function Form<K extends string>({
  fields,
  submitLabel,
  busyLabel,
  onSubmit,
  clearOnSuccess = [],
  title,
  titleLevel = 3,
  layout = "inline",
  className = "form subcard",
  note,
  noteFor,
  actions,
  wideButton = false,
}: FormProps<K>) {
  const id = useId();
  const [values, setValues] = useState(() => initialValues(fields));
  const [invalid, setInvalid] = useState<Partial<Record<K, string>>>({});
  const [done, setDone] = useState<string | null>(null);
  const action = useAction(async (submitted: FieldValues<K>) => {
    const confirmation = await onSubmit(submitted);
    setValues((current) => ({
      ...current,
      ...Object.fromEntries(clearOnSuccess.map((name) => [name, ""])),
    }));
    if (typeof confirmation === "string") setDone(confirmation);
  });

  const fieldId = (name: K) => `${id}-${name}`;
  const noteId = `${id}-note`;
  const titleId = `${id}-title`;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setDone(null);
    const problems: Partial<Record<K, string>> = {};
    for (const field of fields) {
      const problem = field.validate?.(values[field.name], values);
      if (problem) problems[field.name] = problem;
    }
    setInvalid(problems);
    if (Object.keys(problems).length > 0) return;
    void action.run(values);
  };

  const control = (field: Field<K>) => {
    const problem = invalid[field.name];
    const describedBy =
      [
        field.hint ? `${fieldId(field.name)}-hint` : "",
        noteFor === field.name && note ? noteId : "",
        problem ? `${fieldId(field.name)}-error` : "",
      ]
        .filter(Boolean)
        .join(" ") || undefined;
    const common = {
      id: fieldId(field.name),
      value: values[field.name],
      required: field.required,
      "aria-invalid": problem ? true : undefined,
      "aria-describedby": describedBy,
      autoFocus: field.autoFocus,
      onChange: (event: { target: { value: string } }) =>
        setValues((current) => ({ ...current, [field.name]: event.target.value })),
    };
    if (field.type === "select")
      return (
        <select {...common}>
          <Options choices={field.options ?? []} />
        </select>
      );
    const text = {
      minLength: field.minLength,
      maxLength: field.maxLength,
      placeholder: field.placeholder,
      autoComplete: field.autoComplete,
      spellCheck: field.code ? false : undefined,
      autoCapitalize: field.code === "upper-case" ? "characters" : undefined,
    };
    if (field.type === "textarea")
      return (
        <textarea {...common} {...text} rows={field.rows} className={field.code ? "code-input" : undefined} />
      );
    return <input {...common} {...text} type={field.type ?? "text"} pattern={field.pattern?.source} />;
  };

  const Heading = titleLevel === 2 ? "h2" : "h3";
  const button = (
    <button
      type="submit"
      className={wideButton ? "button-primary button-block" : "button-primary"}
      disabled={action.busy}
    >
      {action.busy ? busyLabel : submitLabel}
    </button>
  );
  const feedback = (
    <>
      {action.error != null && <ErrorMessage error={action.error} />}
      {done && <Success>{done}</Success>}
    </>
  );
  const fieldList = fields.map((field) => (
    <div key={field.name} className={field.grow ? "field grow" : "field"}>
      <label htmlFor={fieldId(field.name)}>{field.label}</label>
      {control(field)}
      {field.hint && (
        <p className="hint" id={`${fieldId(field.name)}-hint`}>
          {field.hint}
        </p>
      )}
      {invalid[field.name] && (
        <p className="field-error" id={`${fieldId(field.name)}-error`} role="alert">
          {invalid[field.name]}
        </p>
      )}
    </div>
  ));
  const noteLine = note && (
    <p className="hint" id={noteId}>
      {note}
    </p>
  );

  return (
    <form className={className} onSubmit={submit} aria-labelledby={title ? titleId : undefined}>
      {title && <Heading id={titleId}>{title}</Heading>}
      {layout === "inline" ? (
        <>
          <div className="inline-fields">
            {fieldList}
            {button}
            {actions}
          </div>
          {noteLine}
          {feedback}
        </>
      ) : (
        <>
          {fieldList}
          {noteLine}
          {feedback}
          {button}
          {actions}
        </>
      )}
    </form>
  );
}
