/** Reads a form's JSON text as one object, or says what is wrong with it (`example` shows the shape). */
export function parseJsonObject(
  text: string,
  what: string,
  example: string,
): Record<string, unknown> | string {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() || "{}");
  } catch {
    return `This is not valid JSON. Example: ${example}`;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `The ${what} must be a JSON object, like ${example}.`;
  return value as Record<string, unknown>;
}
