import os from "node:os";
import { SdkClient } from "@sdk/client";
import { credentialsPath, loadLogin, normalizeHost, removeLogin, saveLogin } from "@sdk/client/credentials";
import type { Command } from "../command.ts";
import { connect } from "../context.ts";
import { findServer } from "../discovery/choose.ts";
import { reasonOf, UsageError } from "../errors.ts";
import { ask, isInteractive, readStdin } from "../prompt.ts";

export const login: Command = {
  name: "login",
  summary: "Log in to a server and save the credentials",
  usage: "sdk login [--host http://<server>:8080] [--email <email>] [--password-stdin]",
  details:
    "Without --host (or SDK_HOST) the CLI looks for servers on the local network for 3 seconds (mDNS, service _sdk._tcp): it takes the only one found, or asks which on a terminal (a server's advertised URL is used only when it is on the address that answered); without a terminal or with --json, several servers are an error that lists them. --host is given when mDNS discovery is unavailable. On a terminal you are asked for your email and password; otherwise give --email and pipe the password with --password-stdin. An API token is created for this machine and saved in ~/.sdk/credentials.json (mode 0600).",
  options: { email: { type: "string" }, password: { type: "string" }, "password-stdin": { type: "boolean" } },
  optionHelp: [
    "--host <url>        the server, e.g. http://pi.local:8080 (default: found on the local network)",
    "--email <email>     your account's email",
    "--password-stdin    read the password from standard input",
    "--password <pw>     the password (visible to other users of this machine: prefer --password-stdin)",
  ],
  json: true,
  async run({ values, g }) {
    const hostFlag = g.host ?? g.env.SDK_HOST;
    const found = hostFlag ? normalizeHost(hostFlag) : await findServer(g);
    if (typeof found === "number") return found;
    const host = normalizeHost(found);
    let email = values.email as string | undefined;
    let password = values.password as string | undefined;
    if (values["password-stdin"]) password = await readStdin();
    if (!email || !password) {
      if (!isInteractive()) {
        throw new UsageError("Give --email and --password-stdin (no terminal to ask on)", "login");
      }
      g.out.info(`Logging in to ${g.out.bold(host)}: your password goes to this server`);
      email ??= (await ask("Email: ")).trim();
      password ??= await ask("Password: ", true);
    }
    const client = new SdkClient({ baseUrl: host });
    g.out.step(`Logging in to ${host}`);
    const result = await client.api.login({
      body: { email, password, issueToken: true, tokenName: `sdk CLI on ${os.hostname()}` },
    });
    const token = result.token!;
    await saveLogin(host, {
      token: token.token,
      tokenId: token.id,
      email: result.user.email,
      userId: result.user.id,
      savedAt: new Date().toISOString(),
    });
    g.out.result({ host, user: result.user, credentials: credentialsPath() });
    g.out.line(`${g.out.green("✔")} Logged in to ${g.out.bold(host)} as ${g.out.bold(result.user.email)}`);
    return 0;
  },
};

export const logout: Command = {
  name: "logout",
  summary: "Forget the saved credentials (and revoke the token on the server)",
  usage: "sdk logout [--host <url>]",
  details:
    "Revokes this machine's API token on the server when it can be reached, then removes it from ~/.sdk/credentials.json.",
  json: true,
  async run({ g }) {
    const hostFlag = g.host ?? g.env.SDK_HOST;
    const saved = await loadLogin(hostFlag);
    if (!saved) {
      g.out.result({ loggedOut: false });
      g.out.line("Not logged in: nothing to do.");
      return 0;
    }
    let revoked = true;
    try {
      await new SdkClient({ baseUrl: saved.host, token: saved.login.token }).api.logout();
    } catch (error) {
      revoked = false;
      g.out.warn(`Could not revoke the token on ${saved.host}: ${reasonOf(error)}. Removed it locally.`);
    }
    await removeLogin(saved.host);
    g.out.result({ loggedOut: true, host: saved.host, revoked });
    g.out.line(`${g.out.green("✔")} Logged out of ${saved.host}`);
    return 0;
  },
};

export const whoami: Command = {
  name: "whoami",
  summary: "Show the logged-in user and server",
  usage: "sdk whoami [--host <url>] [--json]",
  json: true,
  async run({ g }) {
    const { client, host, source } = await connect(g);
    const user = await client.api.whoami();
    g.out.result({ host, source, user });
    g.out.line(
      `${g.out.bold(user.email)} (${user.role}) on ${host}${source === "SDK_TOKEN" ? g.out.dim(" — from SDK_TOKEN") : ""}`,
    );
    return 0;
  },
};
