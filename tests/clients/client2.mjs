// Drives a countersign tool with @modelcontextprotocol/client 2.4.x, negotiating 2026-07-28.
// usage: node client2.mjs URL TOKEN TOOL ARGS_JSON ANSWER
//   ANSWER: none (no elicitation capability) | accept | untick | decline | cancel
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token, tool, argsJson, answer] = process.argv.slice(2);
const questions = [];
const capabilities = answer === "none" ? {} : { elicitation: { form: {}, url: {} } };
const client = new Client(
  { name: "countersign-ts-client2", version: "1.0.0" },
  { capabilities, versionNegotiation: { mode: "auto" } },
);
if (answer !== "none") {
  client.setRequestHandler("elicitation/create", async (request) => {
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
  console.log(JSON.stringify({ era: client.getNegotiatedProtocolVersion?.() ?? null, questions, result }));
} catch (err) {
  console.log(JSON.stringify({ error: String(err?.message ?? err), questions }));
} finally {
  await client.close();
}
