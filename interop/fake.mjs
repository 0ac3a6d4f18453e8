// The fake Cooked both runs drive cooked-mcp against: `python -m cooked_fake`, resolved with its URL
// once it says where it listens; the child joins `children`, which each run ends on exit.

import { spawn } from "node:child_process";

export function startFake(python, children) {
  const child = spawn(python, ["-m", "cooked_fake"], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (chunk) => {
      seen += chunk;
      const match = /fake Cooked at (http:\/\/\S+)/.exec(seen);
      if (match) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`the fake Cooked exited with ${code}`)));
  });
}
