// The conformance suite's server scenarios that apply to a server with cooked-mcp's five tools, and
// what each must have really seen. One list for both runs: `make interop` points it at the HTTP
// server without a token, `make remote` at a token-adding proxy in front of remote mode.

import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const NODE22 = join(HERE, "node_modules", ".bin", "node"); // the npm package node@22: the suite needs Node 22
const CONFORMANCE_JS = join(HERE, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

/** Runs every scenario against url, each as check(`${prefix}: scenario`, ...); results under out. */
export async function conformanceServer(url, { tools, check, out, prefix = "conformance" }) {
  const scenarios = {
    "server-initialize": (checks) => checks.length === 1,
    ping: (checks) => checks.length === 1,
    "tools-list": (checks) =>
      JSON.stringify([...(checks[0]?.details?.tools ?? [])].sort()) === JSON.stringify([...tools].sort()),
    "dns-rebinding-protection": (checks) =>
      ["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"].every((id) => checks.some((c) => c.id === id)),
  };
  for (const [scenario, sawIt] of Object.entries(scenarios)) {
    await check(`${prefix}: ${scenario}`, async () => {
      const folder = join(out, scenario);
      const ran = await new Promise((resolve) =>
        execFile(NODE22, [CONFORMANCE_JS, "server", "--url", url, "--scenario", scenario, "-o", folder],
          { timeout: 60_000, maxBuffer: 16 << 20 },
          (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr })),
      );
      const result = existsSync(folder) ? readdirSync(folder)[0] : undefined;
      if (!result) throw new Error(`no results (exit ${ran.code}): ${(ran.stderr || ran.stdout).slice(-300)}`);
      const checks = JSON.parse(readFileSync(join(folder, result, "checks.json"), "utf8"));
      const failed = checks.filter((c) => c.status !== "SUCCESS");
      if (failed.length) throw new Error(failed.map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ""}`).join("; "));
      if (!sawIt(checks)) throw new Error(`passed without testing what it names: ${JSON.stringify(checks).slice(0, 300)}`);
      if (ran.code !== 0) throw new Error(`exit ${ran.code}`);
      return `checks passed: ${checks.map((c) => c.id).join(", ")}`;
    });
  }
}
