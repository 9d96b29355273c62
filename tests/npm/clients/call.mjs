// An agent's MCP client on the official TypeScript SDK: lists the tools, then makes each call of
// a plan, printing what the client read (a result, or the error it threw) as one JSON document.
//
//   node call.mjs '<plan JSON>'
//
// plan: {"url": ..., "sdk": "sdk" | "client", "era": "legacy" | "modern", "headers": {...},
//        "calls": [{"tool": ..., "arguments": {...}, "meta": {...}} |
//                  {"tool": ..., "arguments": {...}, "pay": "<payer's private key, 0x hex>"}],
//        "allowedAssets": [{"network": ..., "asset": ..., "maxAmountPerPayment": ...}]}
//
// sdk "sdk" is @modelcontextprotocol/sdk 1.x (2025-11-25 initialize only); "client" is
// @modelcontextprotocol/client 2.x, which speaks the 2026-07-28 era (server/discover) when asked.
// A "pay" call is the x402 MCP transport from the client's side: call unpaid, read the
// PaymentRequired document from structuredContent, sign with @x402/evm for its first accepts
// entry, call again with the PaymentPayload in _meta["x402/payment"], then once more with the
// same payload (a replay). The x402 client pays in the assets it knows (USDC on its networks)
// and in those the plan opts into (allowedAssets, each with a cap), as an agent configures it.
// Both SDK clients validate structuredContent against the listed output
// schema, so a result that does not match throws.

const plan = JSON.parse(process.argv[2]);

async function connect() {
  const info = { name: "mcp-sonde-interop", version: "1.0.0" };
  const init = { headers: plan.headers ?? {} };
  if (plan.sdk === "sdk") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const client = new Client(info);
    const transport = new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: init });
    await client.connect(transport);
    return { client, version: () => transport.protocolVersion ?? null };
  }
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  const mode = plan.era === "modern" ? { pin: "2026-07-28" } : "legacy";
  const client = new Client(info, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: init }));
  return { client, version: () => client.getNegotiatedProtocolVersion() ?? null };
}

function thrown(error) {
  return { thrown: { name: error?.name ?? "Error", code: error?.code ?? null, message: String(error?.message ?? error) } };
}

async function read(client, tool, args, meta) {
  try {
    const params = { name: tool, arguments: args };
    if (meta) params._meta = meta;
    return { result: await client.callTool(params) };
  } catch (error) {
    return thrown(error);
  }
}

async function payer(key) {
  const { x402Client } = await import("@x402/core/client");
  const { registerExactEvmScheme } = await import("@x402/evm/exact/client");
  const { privateKeyToAccount } = await import("viem/accounts");
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: privateKeyToAccount(key) });
  if (plan.allowedAssets) client.setSpendControls({ allowedAssets: plan.allowedAssets });
  return client;
}

async function pay(client, call) {
  const unpaid = await read(client, call.tool, call.arguments);
  const required = unpaid.result?.structuredContent;
  if (!unpaid.result?.isError || required?.x402Version === undefined) {
    return { unpaid };
  }
  const payload = await (await payer(call.pay)).createPaymentPayload(required);
  const meta = { "x402/payment": payload };
  const paid = await read(client, call.tool, call.arguments, meta);
  const replayed = await read(client, call.tool, call.arguments, meta);
  return { unpaid, paid, replayed };
}

const out = {};
try {
  const { client, version } = await connect();
  out.protocolVersion = version();
  out.tools = (await client.listTools()).tools.map((tool) => tool.name);
  out.calls = [];
  for (const call of plan.calls) {
    out.calls.push(call.pay ? await pay(client, call) : await read(client, call.tool, call.arguments, call.meta));
  }
  await client.close();
} catch (error) {
  Object.assign(out, thrown(error));
}
process.stdout.write(JSON.stringify(out) + "\n");
