import { jsonProblems, jsonTextTooDeep, jsonValueProblem } from "@sdk/protocol";
import type { FastifyInstance } from "fastify";
import { AppError } from "../errors.ts";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

const refuse = (why: string) => new AppError("invalid_request", `Invalid request: ${why}`);

/**
 * A JSON request body by the protocol's rules: strict UTF-8 (never silently U+FFFD), nesting no
 * deeper than `maxJsonDepth` (checked before parsing), finite numbers only, no prototype-poisoning
 * keys. Each refusal says what was refused and why.
 */
function parseJsonBody(bytes: Uint8Array): unknown {
  if (bytes.length === 0) throw refuse("the body is empty but Content-Type says JSON");
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw refuse("the body is not valid UTF-8 text: send JSON encoded as UTF-8");
  }
  if (jsonTextTooDeep(text)) throw refuse(`the body ${jsonProblems.tooDeep}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw refuse(`the body is not valid JSON (${(error as Error).message})`);
  }
  const problem = jsonValueProblem(value, { prototypeKeys: true });
  if (problem) throw refuse(problem.replace(/^the value\b/, "the body"));
  return value;
}

/** Replaces Fastify's JSON parser (lenient UTF-8, one message for every refusal) with `parseJsonBody`. */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
