import { describeError } from "../api.ts";

/** A server error in plain words, each bad field on its own line, and the docs link for the code. */
export function ErrorMessage({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const problem = describeError(error);
  const fields = problem.fields ?? [];
  return (
    <div className="notice notice-error" role="alert">
      <p className="notice-title">{problem.title}</p>
      {fields.length > 0 ? (
        <ul>
          {fields.map((field) => (
            <li key={`${field.path}:${field.message}`}>
              <strong>{field.path.replace(/^(body|query|params)\.?/, "") || "request"}</strong>{" "}
              {field.message}
            </li>
          ))}
        </ul>
      ) : (
        <p>{problem.message}</p>
      )}
      {(problem.docs || onRetry) && (
        <p className="notice-actions">
          {problem.docs && (
            <a href={problem.docs} target="_blank" rel="noreferrer">
              More about this error ({problem.code})
            </a>
          )}
          {onRetry && (
            <button type="button" className="button-small" onClick={onRetry}>
              Try again
            </button>
          )}
        </p>
      )}
    </div>
  );
}
