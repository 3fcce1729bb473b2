/** The folder holding the reference pages (*.md). */
export const docsDirUrl = new URL("./", import.meta.url);
