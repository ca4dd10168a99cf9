// Drives a countersign tool with @modelcontextprotocol/sdk 1.32.x (2025-11-25 protocol).
// usage: node sdk1.mjs URL TOKEN TOOL ARGS_JSON ANSWER
//   ANSWER: none (no elicitation capability) | accept | untick | decline | cancel
// Prints one JSON line: {questions: [...], result: <CallToolResult>} or {error: "..."}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, token, tool, argsJson, answer] = process.argv.slice(2);
const questions = [];
const capabilities = answer === "none" ? {} : { elicitation: { form: {}, url: {} } };
const client = new Client({ name: "countersign-ts-sdk1", version: "1.0.0" }, { capabilities });
if (answer !== "none") {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    questions.push(request.params);
    if (answer === "accept") return { action: "accept", content: { confirm: true } };
    if (answer === "untick") return { action: "accept", content: { confirm: false } };
    return { action: answer };
  });
}
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
try {
  await client.connect(transport);
  const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJson) });
  console.log(JSON.stringify({ protocol: transport.protocolVersion ?? null, questions, result }));
} catch (err) {
  console.log(JSON.stringify({ error: String(err?.message ?? err), questions }));
} finally {
  await client.close();
}
