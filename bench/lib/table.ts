/** A number as a table cell: thousands separators, `digits` decimals, "–" when there is none. */
export function cell(value: number | null | undefined, digits: number): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "–";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `a / b` as a ratio cell ("3.5×"), "–" when either is missing or b is 0. */
export function ratioCell(a: number | null | undefined, b: number | null | undefined, digits = 1): string {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return "–";
  const ratio = a / b;
  return Number.isFinite(ratio) ? `${cell(ratio, digits)}×` : "–";
}

/** A Markdown table: the first column left-aligned (labels), the others right-aligned (figures). */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${headers.join(" | ")} |`,
    `|${headers.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`,
    ...rows.map((cells) => `| ${cells.join(" | ")} |`),
  ].join("\n");
}
