#!/usr/bin/env node
// resources.mjs drives the resources, prompts and completions of a Toolshed
// MCP endpoint with the official TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned in package-lock.json):
//
//   node scripts/sdkclient/resources.mjs http://127.0.0.1:8000/mcp [FILE [PATH-PREFIX]]
//
// It connects over Streamable HTTP and checks, printing what it sees: the
// server advertises resources, prompts and completions; resources/list
// (every page) lists the memory files; resources/templates/list has the
// repository template; reading the repository file FILE (default
// README.md) as repo://default/FILE gives its text with a MIME type;
// completing the template's path argument from PATH-PREFIX (default the
// first letters of FILE) offers FILE; prompts/list has the prompts with
// titles, and getting explain_file for FILE embeds the file; reading a
// denied file (.env) fails with PATH_NOT_ALLOWED. The SDK client validates
// every answer against its schemas itself.
//
// It exits 0 when every check passed, 1 otherwise (2 on bad usage).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

let failed = 0;

function check(ok, what, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? `: ${detail}` : ''}`);
  if (!ok) failed++;
}

async function listAll(list, key) {
  const items = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : undefined);
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

async function main() {
  const [url, file = 'README.md', prefix = file.slice(0, 3)] = process.argv.slice(2);
  if (!url) {
    console.error('usage: node scripts/sdkclient/resources.mjs <MCP endpoint URL> [FILE [PATH-PREFIX]]');
    process.exit(2);
  }
  const client = new Client({ name: 'toolshed-sdkclient-resources', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  console.log(`connected to ${url}: protocol ${transport.protocolVersion}`);

  const caps = client.getServerCapabilities() ?? {};
  check(Boolean(caps.resources && caps.prompts && caps.completions), 'capabilities', JSON.stringify(caps));

  const resources = await listAll((p) => client.listResources(p), 'resources');
  console.log(`resources/list: ${resources.length} resources`);
  for (const r of resources.slice(0, 12)) console.log(`  ${r.uri}  ${r.mimeType ?? ''}  ${r.title ?? r.name}`);
  check(resources.some((r) => r.uri === 'memory://decisions.jsonl'), 'resources/list has memory://decisions.jsonl');

  const { resourceTemplates } = await client.listResourceTemplates();
  for (const t of resourceTemplates) console.log(`template: ${t.uriTemplate}  ${t.title}`);
  check(resourceTemplates.some((t) => t.uriTemplate === 'repo://{repo}/{+path}'), 'resources/templates/list has repo://{repo}/{+path}');

  const uri = `repo://default/${file}`;
  const read = await client.readResource({ uri });
  const contents = read.contents[0] ?? {};
  console.log(`resources/read ${uri}: ${contents.mimeType}, ${contents.text?.length ?? 0} characters: ${JSON.stringify((contents.text ?? '').slice(0, 80))}…`);
  check(contents.uri === uri && typeof contents.text === 'string' && contents.text.length > 0 && Boolean(contents.mimeType), `read ${uri}`);

  const completion = await client.complete({
    ref: { type: 'ref/resource', uri: 'repo://{repo}/{+path}' },
    argument: { name: 'path', value: prefix },
  });
  console.log(`completion/complete path "${prefix}": ${JSON.stringify(completion.completion.values.slice(0, 10))}`);
  check(completion.completion.values.includes(file), `completing "${prefix}" offers ${file}`);

  const prompts = await listAll((p) => client.listPrompts(p), 'prompts');
  for (const p of prompts) console.log(`prompt: ${p.name} "${p.title}" (${(p.arguments ?? []).map((a) => a.name + (a.required ? '*' : '')).join(', ')})`);
  check(prompts.length >= 3 && prompts.every((p) => p.title && p.description), 'prompts/list: prompts with titles and descriptions');

  const prompt = await client.getPrompt({ name: 'explain_file', arguments: { path: file } });
  const embedded = prompt.messages.find((m) => m.content.type === 'resource');
  check(embedded?.content.resource.uri === uri, `prompts/get explain_file embeds ${uri}`);

  try {
    await client.readResource({ uri: 'repo://default/.env' });
    check(false, 'reading .env is refused');
  } catch (err) {
    check(err.data?.code === 'PATH_NOT_ALLOWED', 'reading .env is refused with PATH_NOT_ALLOWED', `${err.code} ${err.message}`);
  }

  await client.close();
  console.log(failed ? `${failed} checks failed` : 'all checks passed');
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(`resources.mjs: ${err.stack ?? err}`);
  process.exit(1);
});
