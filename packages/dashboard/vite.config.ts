import { defineConfig } from "vite";

// Plain Vite: React's JSX is compiled by Vite's own transform (automatic runtime).
// Everything is bundled locally: no CDN fonts or scripts.
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, target: "es2022" },
  server: {
    proxy: { "/v1": { target: "http://127.0.0.1:8080", ws: true }, "/docs": "http://127.0.0.1:8080" },
  },
});
