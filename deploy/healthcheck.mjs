// The image's HEALTHCHECK (the image has no shell or curl): exits 0 when GET /health answers 200.
const port = process.env.PORT || "8080";
try {
  const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(4000) });
  process.exit(response.ok ? 0 : 1);
} catch (error) {
  console.error(`health check failed: ${error.message}`);
  process.exit(1);
}
