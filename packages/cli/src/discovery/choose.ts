import type { Globals } from "../context.ts";
import { CliError, exitCodes } from "../errors.ts";
import { ask, isInteractive } from "../prompt.ts";
import { browseServers, type FoundServer } from "./mdns.ts";

const browseSeconds = 3;

const describe = (g: Globals, s: FoundServer) =>
  `${g.out.bold(s.name)}  ${s.url}${s.version ? g.out.dim(`  (version ${s.version})`) : ""}`;

function noneFound(problem: string | undefined): CliError {
  return new CliError(
    [
      `No sdk server answered on the local network within ${browseSeconds} s (mDNS${problem ? `: ${problem}` : ""}).`,
      "Name the server instead: sdk login --host http://<server>:8080",
      "Discovery fails where the network or a firewall blocks multicast (UDP port 5353), where the server runs with MDNS=false, and where it runs in a container without host networking.",
    ].join("\n"),
    { code: "no_server_found" },
  );
}

/**
 * `sdk login` without `--host`: browses for servers, then takes the only one, or asks which on a
 * terminal. Without a terminal (or with --json) several servers are an error listing them; the
 * return value is then the exit code, already reported.
 */
export async function findServer(g: Globals): Promise<string | number> {
  g.out.step(`Looking for sdk servers on the local network (mDNS, ${browseSeconds} s)`);
  let servers: FoundServer[] = [];
  let problem: string | undefined;
  try {
    servers = await browseServers(browseSeconds * 1000);
  } catch (error) {
    problem = (error as Error).message;
  }
  g.out.stopSpinner();
  if (servers.length === 0) throw noneFound(problem);
  if (servers.length === 1) {
    g.out.info(`Found ${describe(g, servers[0]!)}`);
    return servers[0]!.url;
  }
  const list = servers.map((s, i) => `  ${i + 1}) ${describe(g, s)}`);
  if (g.out.json || !isInteractive()) {
    const message = `${servers.length} sdk servers answered; name one with --host <url>`;
    g.out.result({ ok: false, error: { code: "several_servers", message }, servers });
    if (!g.out.json) process.stderr.write(`${g.out.red("error:")} ${message}:\n${list.join("\n")}\n`);
    return exitCodes.failure;
  }
  g.out.info(`Found ${servers.length} sdk servers:\n${list.join("\n")}`);
  for (;;) {
    const answer = (await ask(`Which one? [1-${servers.length}]: `)).trim();
    const chosen = servers[Number(answer) - 1];
    if (/^\d+$/.test(answer) && chosen) return chosen.url;
  }
}
