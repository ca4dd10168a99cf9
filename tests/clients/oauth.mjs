// Connects to countersign with the TypeScript SDK's OAuth client, then files a held write and
// polls it. Driven line by line by tests/browser/test_oauth_clients.py (which plays the person).
// usage: node oauth.mjs SDK URL REDIRECT_URL CLIENT_METADATA_URL|- CLIENT_NAME
//   SDK: sdk1 (@modelcontextprotocol/sdk 1.32.x) | client2 (@modelcontextprotocol/client 2.4.x)
// stdout, one JSON object a line: {authorize} → (stdin {callback}) → {held} → (stdin {poll}) →
// {status}, then {secrets} (what the test adds to its secret scan), or {error}.
import readline from "node:readline";

const [sdk, url, redirect, metadataUrl, clientName] = process.argv.slice(2);
const lib = sdk === "sdk1"
  ? {
    ...(await import("@modelcontextprotocol/sdk/client/index.js")),
    ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
    ...(await import("@modelcontextprotocol/sdk/client/auth.js")),
  }
  : await import("@modelcontextprotocol/client");
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = lib;

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => JSON.parse((await lines.next()).value);
const say = (obj) => console.log(JSON.stringify(obj));

const kept = { state: crypto.randomUUID() + crypto.randomUUID() };
const provider = {
  get redirectUrl() { return redirect; },
  get clientMetadata() {
    return {
      client_name: clientName, redirect_uris: [redirect], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none",
    };
  },
  ...(metadataUrl !== "-" ? { clientMetadataUrl: metadataUrl } : {}),
  state() { return kept.state; },
  clientInformation() { return kept.client; },
  saveClientInformation(info) { kept.client = info; },
  tokens() { return kept.tokens; },
  saveTokens(tokens) { kept.tokens = tokens; },
  redirectToAuthorization(authorizationUrl) { say({ authorize: authorizationUrl.href }); },
  saveCodeVerifier(verifier) { kept.verifier = verifier; },
  codeVerifier() { return kept.verifier; },
};

const newClient = () => new Client({ name: `countersign-oauth-${sdk}`, version: "1.0.0" }, { capabilities: {} });
try {
  let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  try {
    await newClient().connect(transport);
    throw new Error("connected without authorization");
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err;
  }
  const callback = new URL((await next()).callback);
  const params = callback.searchParams;
  if (params.get("state") !== kept.state) throw new Error("state mismatch");
  if (params.get("iss") !== new URL(url).origin) throw new Error(`iss mismatch: ${params.get("iss")}`);
  kept.code = params.get("code");
  if (sdk === "sdk1") await transport.finishAuth(kept.code);
  else await transport.finishAuth(params);
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = newClient();
  await client.connect(transport);
  const held = await client.callTool({ name: "publish_note", arguments: { note_id: "n1", text: `from ${sdk}` } });
  say({ held: held.structuredContent });
  const { poll } = await next();
  const status = await client.callTool({ name: "get_confirmation_status", arguments: { confirmation_id: poll } });
  say({ status: status.structuredContent });
  await client.close();
} catch (err) {
  say({ error: String(err?.stack ?? err) });
} finally {
  say({ secrets: [kept.code, kept.verifier, kept.tokens?.access_token, kept.tokens?.refresh_token].filter(Boolean) });
  process.exit(0);
}
