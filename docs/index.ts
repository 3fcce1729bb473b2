/** The folder holding the reference pages (*.md). */
export const docsDirUrl = new URL("./", import.meta.url);

/** The anchor of a heading, as the server renders the pages: `## Close codes` → `close-codes`. */
export function headingSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/[^a-z0-9_ -]/g, "")
    .trim()
    .replace(/\s+/g, "-");
}
