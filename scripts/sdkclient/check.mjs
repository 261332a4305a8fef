#!/usr/bin/env node
// check.mjs drives a Toolshed MCP endpoint with the official TypeScript SDK
// client (@modelcontextprotocol/sdk, pinned in package-lock.json):
//
//   node scripts/sdkclient/check.mjs http://127.0.0.1:8000/mcp
//
// It connects over Streamable HTTP, lists the tools, and calls every listed
// tool with the first example of its contract (contracts/<tool>.json) that
// expects no error, needs no setup and no git history. Each call must succeed, and its
// structuredContent must validate against the tool's outputSchema: the SDK
// client checks this itself, and the script checks again with the ajv the
// SDK depends on (JSON Schema 2020-12, the contracts' dialect). Tools
// without such an example are printed as skipped, and so is a tool whose
// example reaches the internet ("internet": true) when the call fails with
// UPSTREAM_ERROR: the internet is unreachable from here (any other failure
// still fails). Because it iterates over tools/list, tools added later are
// covered without changing this script.
//
// It exits 0 when every call passed, 1 otherwise (2 on bad usage).

import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const contractsDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'contracts');

// loadContracts returns the tool contracts by name (errors.json is the
// error vocabulary, not a tool).
function loadContracts() {
  const byName = new Map();
  for (const file of readdirSync(contractsDir)) {
    if (!file.endsWith('.json') || file === 'errors.json') continue;
    const contract = JSON.parse(readFileSync(join(contractsDir, file), 'utf8'));
    byName.set(contract.name, contract);
  }
  return byName;
}

// loadAjv returns an Ajv 2020-12 instance with formats, resolved from the
// SDK's own dependencies so the check uses the ajv the SDK ships with.
function loadAjv() {
  const sdkRequire = createRequire(fileURLToPath(import.meta.resolve('@modelcontextprotocol/sdk/client/index.js')));
  let Ajv2020, addFormats;
  try {
    Ajv2020 = sdkRequire('ajv/dist/2020').default;
    addFormats = sdkRequire('ajv-formats').default;
  } catch (err) {
    throw new Error(`cannot load ajv/ajv-formats as dependencies of @modelcontextprotocol/sdk (run npm ci): ${err.message}`);
  }
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv;
}

async function listAllTools(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

// offline is the problem checkTool reports for an internet example that
// could not reach the internet.
const offline = 'offline';

// checkTool calls one tool with its example and returns a problem, or ''.
async function checkTool(client, ajv, tool, example) {
  const result = await client.callTool({ name: tool.name, arguments: example.input });
  if (result.isError) {
    if (example.internet && upstreamError(result)) {
      return offline;
    }
    return `isError result: ${JSON.stringify(result.content)}`;
  }
  if (!tool.outputSchema) {
    return 'tools/list shows no outputSchema';
  }
  if (result.structuredContent === undefined) {
    return 'no structuredContent';
  }
  const validate = ajv.compile(tool.outputSchema);
  if (!validate(result.structuredContent)) {
    return `structuredContent does not match the outputSchema: ${ajv.errorsText(validate.errors)}`;
  }
  return '';
}

// upstreamError reports whether a tool error's code is UPSTREAM_ERROR.
function upstreamError(result) {
  try {
    return JSON.parse(result.content?.[0]?.text ?? '').code === 'UPSTREAM_ERROR';
  } catch {
    return false;
  }
}

async function main() {
  const url = process.argv[2];
  if (!url) {
    console.error('usage: node scripts/sdkclient/check.mjs <MCP endpoint URL>');
    process.exit(2);
  }
  const contracts = loadContracts();
  const ajv = loadAjv();
  const client = new Client({ name: 'toolshed-sdkclient', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  console.log(`connected to ${url}: protocol ${transport.protocolVersion}, server ${JSON.stringify(client.getServerVersion())}`);

  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const tools = await listAllTools(client);
  if (tools.length === 0) {
    console.log('FAIL tools/list is empty');
    failed++;
  }
  for (const tool of tools) {
    const contract = contracts.get(tool.name);
    if (!contract) {
      console.log(`FAIL ${tool.name}: listed, but contracts/ has no contract named so`);
      failed++;
      continue;
    }
    // An example made for the tests' git history needs a repository the
    // server under test need not have.
    const example = (contract.examples ?? []).find((e) => e.error === undefined && e.setup === undefined &&
      !e.historyRepository);
    if (!example) {
      console.log(`skip ${tool.name}: no example without error, setup or git history`);
      skipped++;
      continue;
    }
    let problem;
    try {
      problem = await checkTool(client, ajv, tool, example);
    } catch (err) {
      problem = `call failed: ${err.message}`;
    }
    if (problem === offline) {
      console.log(`skip ${tool.name} (example "${example.name}"): the internet is unreachable (UPSTREAM_ERROR)`);
      skipped++;
    } else if (problem) {
      console.log(`FAIL ${tool.name} (example "${example.name}"): ${problem}`);
      failed++;
    } else {
      console.log(`ok   ${tool.name} (example "${example.name}")`);
      passed++;
    }
  }
  await client.close();
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(failed > 0 ? 1 : 0);
}

main().catch((err) => {
  console.error(`check.mjs: ${err.stack ?? err}`);
  process.exit(1);
});
