// A 2025-era stdio host (@modelcontextprotocol/sdk 1.32.x) talking to countersign through mcp-remote,
// the stdio-to-HTTP proxy desktop hosts use for remote servers.
// usage: node remote.mjs URL TOKEN MODE TOOL ARGS_JSON ANSWER
//   MODE: legacy (mcp-remote's default: the host's handshake goes through) | auto (--protocol auto:
//         mcp-remote speaks 2026-07-28 to the server on the host's behalf)
//   ANSWER: none (the host declares no elicitation) | accept | untick | decline | cancel
// The host declares form and URL elicitation, as a 2025-11-25 host may. Prints one JSON line:
// {questions: [...], result: <CallToolResult>} or {error: "...", questions: [...]}.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token, mode, tool, argsJson, answer] = process.argv.slice(2);
const proxy = fileURLToPath(new URL("./node_modules/mcp-remote/dist/proxy.js", import.meta.url));
const args = [proxy, url, "--transport", "http-only", "--header", `Authorization:Bearer ${token}`];
if (mode === "auto") args.push("--protocol", "auto");
const questions = [];
const capabilities = answer === "none" ? {} : { elicitation: { form: {}, url: {} } };
const client = new Client({ name: "countersign-ts-remote-host", version: "1.0.0" }, { capabilities });
if (answer !== "none") {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    questions.push(request.params);
    if (answer === "accept") return { action: "accept", content: { confirm: true } };
    if (answer === "untick") return { action: "accept", content: { confirm: false } };
    return { action: answer };
  });
}
const transport = new StdioClientTransport({
  command: process.execPath,
  args,
  // mcp-remote keeps OAuth state in a folder of its own; never the user's.
  env: { ...process.env, MCP_REMOTE_CONFIG_DIR: mkdtempSync(join(tmpdir(), "mcp-remote-")) },
  stderr: "pipe",
});
let stderr = "";
transport.stderr?.on("data", (chunk) => { stderr += chunk; });
try {
  await client.connect(transport);
  const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJson) });
  console.log(JSON.stringify({ questions, result }));
} catch (err) {
  console.log(JSON.stringify({ error: String(err?.message ?? err), questions, stderr: stderr.slice(-2000) }));
} finally {
  await client.close();
}
