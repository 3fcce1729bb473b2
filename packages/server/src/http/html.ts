const escapes: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => escapes[c]!);

/** A self-contained page (no external fonts, scripts or styles), light and dark. */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · sdk</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
  body { max-width: 52rem; margin: 0 auto; padding: 1rem 1.25rem 4rem; }
  code, pre { font-family: ui-monospace, monospace; font-size: 0.92em; }
  pre { overflow-x: auto; padding: 0.75rem; border-radius: 6px; background: color-mix(in srgb, currentColor 8%, transparent); }
  table { border-collapse: collapse; } th, td { border: 1px solid color-mix(in srgb, currentColor 25%, transparent); padding: 0.3rem 0.6rem; text-align: left; }
  h2 { margin-top: 2rem; } :target { scroll-margin-top: 1rem; outline: 2px solid #f59e0b; outline-offset: 4px; }
  nav a { margin-right: 1rem; }
</style>
</head>
<body>
<nav><a href="/">Dashboard</a><a href="/docs">Docs</a><a href="/docs/errors">Errors</a><a href="/docs/changelog">Changelog</a></nav>
${body}
</body>
</html>
`;
}
