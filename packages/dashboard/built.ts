/** The folder `vite build` writes the dashboard to; it exists only after a build. */
export const dashboardDistUrl = new URL("./dist/", import.meta.url);
